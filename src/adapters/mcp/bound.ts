/**
 * Every MCP result fits in one client message. The SDK client's stdio reader refuses a message
 * over 10 MiB and drops the connection with it, so keel keeps each result at most MAX_RESULT_BYTES
 * of JSON (8 MiB: room for the JSON-RPC envelope). Past it, keel's details leave `_meta` first, then
 * content blocks are kept in order while they fit: a text block that does not is cut, an image that
 * does not is replaced by a line saying so; a closing text block names what was left out.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { META_DETAILS } from "./results.js";

export const MAX_RESULT_BYTES = 8 * 1024 * 1024;

const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? "", "utf8");
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;

type Block = CallToolResult["content"][number];

/** The longest prefix of `text` whose text block is at most `budget` bytes of JSON. */
function cutText(text: string, budget: number): string {
	let n = Math.floor((text.length * budget) / Math.max(1, jsonBytes({ type: "text", text })));
	while (n > 0 && jsonBytes({ type: "text", text: text.slice(0, n) }) > budget) n = Math.floor(n * 0.9);
	const code = text.charCodeAt(n - 1);
	if (n > 0 && code >= 0xd800 && code <= 0xdbff) n--; // not half a surrogate pair
	return text.slice(0, n);
}

/** Nesting past this is measured by serializing. */
const WALK_DEPTH = 16;

/**
 * An upper bound on the JSON size of `v` without serializing it: a UTF-16 code unit never takes
 * more than 6 bytes in JSON (`\u001f`), a number at most 24; anything else is serialized.
 */
function jsonSizeAtMost(v: unknown, depth = 0): number {
	if (v === null || v === undefined || typeof v === "boolean") return 5;
	if (typeof v === "string") return 2 + v.length * 6;
	if (typeof v === "number") return 24;
	if (typeof v !== "object" || depth > WALK_DEPTH || "toJSON" in v) return jsonBytes(v);
	let n = 2;
	if (Array.isArray(v)) for (const x of v) n += 1 + jsonSizeAtMost(x, depth + 1);
	else for (const [k, x] of Object.entries(v)) n += 4 + k.length * 6 + jsonSizeAtMost(x, depth + 1);
	return n;
}

/**
 * An upper bound on the result's JSON size without serializing it: a UTF-16 code unit never takes
 * more than 6 bytes in JSON (`\u001f`), base64 is ASCII. Keeps the common case cheap.
 */
function sizeAtMost(result: CallToolResult): number {
	let n = 256 + jsonSizeAtMost(result._meta) + jsonSizeAtMost(result.structuredContent);
	for (const b of result.content) {
		if (b.type === "text") n += 64 + b.text.length * 6;
		else if (b.type === "image" || b.type === "audio") n += 64 + b.data.length + b.mimeType.length;
		else n += jsonBytes(b);
	}
	return n;
}

export function boundResult(result: CallToolResult, max = MAX_RESULT_BYTES): CallToolResult {
	if (sizeAtMost(result) <= max || jsonBytes(result) <= max) return result;
	const left: string[] = [];
	const out: CallToolResult = { ...result, _meta: { ...result._meta } };
	if (out._meta?.[META_DETAILS] !== undefined) {
		out._meta[META_DETAILS] = { omitted: `over the ${mib(max)} result limit` };
		left.push("the call's details");
	}
	const error = (out.structuredContent as { error?: { details?: unknown } } | undefined)?.error;
	if (error?.details !== undefined && jsonBytes(out.structuredContent) > max / 4) {
		out.structuredContent = { ...out.structuredContent, error: { ...error, details: undefined } };
		left.push("the error's details");
	}
	// Room for the closing note and the block separators.
	let budget = max - jsonBytes({ ...out, content: [] }) - 2048;
	const content: Block[] = [];
	for (const block of result.content) {
		const size = jsonBytes(block) + 1;
		if (size <= budget) {
			content.push(block);
			budget -= size;
		} else if (block.type === "text") {
			const kept = cutText(block.text, Math.max(0, budget - 64));
			content.push({ type: "text", text: kept });
			budget -= jsonBytes({ type: "text", text: kept }) + 1;
			left.push(`${block.text.length - kept.length} characters of text`);
		} else if (block.type === "image") {
			const line = `[image (${block.mimeType}, ${mib(block.data.length)} as base64) left out: over the ${mib(max)} result limit]`;
			content.push({ type: "text", text: line });
			budget -= line.length + 32;
			left.push("an image");
		} else {
			left.push(`a ${block.type} block`);
		}
	}
	if (left.length > 0) {
		content.push({
			type: "text",
			text: `[keel: this result was over the ${mib(max)} limit MCP clients accept; left out: ${left.join(", ")}. Ask for less (offset/limit, a narrower pattern, a smaller image).]`,
		});
	}
	out.content = content;
	return out;
}
