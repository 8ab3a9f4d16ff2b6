/**
 * A tool's partial results (bash output as it arrives) as MCP progress notifications, when the
 * client asked for them with a progressToken. Bounded: at most one notification per interval, and
 * the message is only the tail of the output, so a chatty command cannot flood the connection.
 */
import type { ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { ToolResult } from "../../tools/types.js";

export const PROGRESS_INTERVAL_MS = 250;
export const PROGRESS_MESSAGE_CHARS = 500;

/** The last `max` characters of `text`, without a lone low surrogate at the cut. */
function tail(text: string, max: number): string {
	if (text.length <= max) return text;
	let start = text.length - max;
	const code = text.charCodeAt(start);
	if (code >= 0xdc00 && code <= 0xdfff) start++;
	return text.slice(start);
}

export function progressForwarder(
	token: ProgressToken,
	send: (n: ServerNotification) => Promise<void>,
	now: () => number = () => performance.now(),
): (partial: ToolResult) => void {
	let count = 0;
	let last = Number.NEGATIVE_INFINITY;
	return (partial) => {
		const t = now();
		if (t - last < PROGRESS_INTERVAL_MS) return;
		last = t;
		count++;
		const text = partial.content
			.filter((c) => c.type === "text")
			.map((c) => (c as { text: string }).text)
			.join("\n");
		const params = { progressToken: token, progress: count, message: tail(text, PROGRESS_MESSAGE_CHARS) };
		// A failed notification (client gone) must not fail the call.
		send({ method: "notifications/progress", params }).catch(() => {});
	};
}
