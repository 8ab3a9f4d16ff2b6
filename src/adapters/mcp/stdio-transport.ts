/**
 * keel's stdio server transport: newline-delimited JSON-RPC like the SDK's StdioServerTransport,
 * with a message limit of its own. The SDK's reader stops at 10 MiB, closes the transport and
 * re-copies its whole buffer on every chunk; this one keeps a chunk list (linear in the message
 * size) up to `maxMessageBytes`. A longer line is skipped to its newline, answered with a JSON-RPC
 * error naming the limit (with the request's id when it can be seen at either end of the line),
 * and the connection keeps serving.
 */
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** How much of an oversized line's start and end is kept to find its id. */
const EDGE_BYTES = 4096;

const ID_AT_END = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/;
const ID_AT_START = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/;

/** The id of a request whose line was too long, when it can be read off the line's ends. */
export function idOfOversized(head: string, tail: string): string | number | null {
	const m = ID_AT_END.exec(tail) ?? ID_AT_START.exec(head);
	if (!m) return null;
	try {
		return JSON.parse(m[1]) as string | number;
	} catch {
		return null;
	}
}

export class LimitedStdioTransport implements Transport {
	onmessage?: (message: JSONRPCMessage) => void;
	onerror?: (error: Error) => void;
	onclose?: () => void;
	private chunks: Buffer[] = [];
	private size = 0;
	/** The current line passed the limit: its bytes are counted and dropped up to its newline. */
	private oversized: { head: Buffer; tail: Buffer; bytes: number } | undefined;

	constructor(
		private readonly stdin: Readable,
		private readonly stdout: Writable,
		readonly maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
	) {}

	private readonly onData = (chunk: Buffer) => {
		let start = 0;
		for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
			this.hold(chunk.subarray(start, nl));
			this.endLine();
			start = nl + 1;
		}
		this.hold(chunk.subarray(start));
	};

	private readonly onError = (e: Error) => this.onerror?.(e);

	async start(): Promise<void> {
		this.stdin.on("data", this.onData);
		this.stdin.on("error", this.onError);
	}

	private hold(part: Buffer): void {
		if (part.length === 0) return;
		if (this.oversized) {
			this.oversized.bytes += part.length;
			this.oversized.tail = Buffer.concat([this.oversized.tail, part]).subarray(-EDGE_BYTES);
			return;
		}
		if (this.size + part.length <= this.maxMessageBytes) {
			this.chunks.push(part);
			this.size += part.length;
			return;
		}
		const held = Buffer.concat([...this.chunks, part]);
		this.oversized = {
			head: held.subarray(0, EDGE_BYTES),
			tail: held.subarray(-EDGE_BYTES),
			bytes: held.length,
		};
		this.chunks = [];
		this.size = 0;
	}

	private endLine(): void {
		if (this.oversized) {
			const { head, tail, bytes } = this.oversized;
			this.oversized = undefined;
			this.refuse(idOfOversized(head.toString("utf8"), tail.toString("utf8")), bytes);
			return;
		}
		const line = Buffer.concat(this.chunks, this.size).toString("utf8").replace(/\r$/, "");
		this.chunks = [];
		this.size = 0;
		if (line.trim() === "") return;
		let message: JSONRPCMessage;
		try {
			message = JSONRPCMessageSchema.parse(JSON.parse(line));
		} catch (e) {
			this.onerror?.(e instanceof Error ? e : new Error(String(e)));
			return;
		}
		this.onmessage?.(message);
	}

	private refuse(id: string | number | null, bytes: number): void {
		const limit = this.maxMessageBytes;
		const message =
			`Message of ${bytes} bytes is over keel's stdio message limit of ${limit} bytes ` +
			`(${Math.round(limit / 1024 / 1024)} MiB; keel serve --max-message-mib raises it). Send less per call, ` +
			"e.g. write a large file in parts.";
		this.onerror?.(new Error(message));
		// A notification (no id) gets no response under JSON-RPC; a request without a readable id gets id null.
		const response = {
			jsonrpc: "2.0",
			id,
			error: { code: -32600, message, data: { limitBytes: limit, bytes } },
		};
		this.stdout.write(`${JSON.stringify(response)}\n`);
	}

	send(message: JSONRPCMessage): Promise<void> {
		return new Promise((resolve) => {
			if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
			else this.stdout.once("drain", resolve);
		});
	}

	async close(): Promise<void> {
		this.stdin.off("data", this.onData);
		this.stdin.off("error", this.onError);
		if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
		this.chunks = [];
		this.size = 0;
		this.onclose?.();
	}
}
