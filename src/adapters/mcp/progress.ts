/**
 * MCP progress notifications for one call, when the client asked with a progressToken: a tool's
 * partial results (bash output as it arrives), and a heartbeat while the call runs without output,
 * so a client that resets its request timeout on progress (the SDK client's resetTimeoutOnProgress)
 * keeps waiting for a quiet long command. Bounded: at most one output notification per interval, and
 * its message is only the tail of the output, so a chatty command cannot flood the connection.
 */
import type { ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { ToolResult } from "../../tools/types.js";

export const PROGRESS_INTERVAL_MS = 250;
export const PROGRESS_MESSAGE_CHARS = 500;
/** A call quiet this long gets a heartbeat notification. */
export const HEARTBEAT_MS = 10_000;

/** The last `max` characters of `text`, without a lone low surrogate at the cut. */
function tail(text: string, max: number): string {
	if (text.length <= max) return text;
	let start = text.length - max;
	const code = text.charCodeAt(start);
	if (code >= 0xdc00 && code <= 0xdfff) start++;
	return text.slice(start);
}

export interface ProgressOptions {
	now?: () => number;
	heartbeatMs?: number;
}

export class ProgressReporter {
	private count = 0;
	private lastUpdate = Number.NEGATIVE_INFINITY;
	private lastSent: number;
	private timer: NodeJS.Timeout | undefined;
	private readonly now: () => number;
	private readonly started: number;

	constructor(
		private readonly token: ProgressToken,
		private readonly send: (n: ServerNotification) => Promise<void>,
		private readonly opts: ProgressOptions = {},
	) {
		this.now = opts.now ?? (() => performance.now());
		this.started = this.now();
		this.lastSent = this.started;
	}

	/** A partial result: forwarded unless one went out less than an interval ago. */
	update(partial: ToolResult): void {
		const t = this.now();
		if (t - this.lastUpdate < PROGRESS_INTERVAL_MS) return;
		this.lastUpdate = t;
		const text = partial.content
			.filter((c) => c.type === "text")
			.map((c) => (c as { text: string }).text)
			.join("\n");
		this.emit(tail(text, PROGRESS_MESSAGE_CHARS), t);
	}

	/** Starts the heartbeat: a notification whenever nothing was sent for heartbeatMs. */
	startHeartbeat(): void {
		const every = this.opts.heartbeatMs ?? HEARTBEAT_MS;
		this.timer = setInterval(() => {
			const t = this.now();
			if (t - this.lastSent < every * 0.9) return;
			this.emit(`still running (${Math.round((t - this.started) / 1000)} s)`, t);
		}, every);
		this.timer.unref();
	}

	stop(): void {
		clearInterval(this.timer);
		this.timer = undefined;
	}

	private emit(message: string, t: number): void {
		this.count++;
		this.lastSent = t;
		const params = { progressToken: this.token, progress: this.count, message };
		// A failed notification (client gone) must not fail the call.
		this.send({ method: "notifications/progress", params }).catch(() => {});
	}
}
