/** Numeric arguments of grep, find, read and ls: each has a range, and a value outside it is refused. */
import { KeelError } from "../boundary/errors.js";
import type { ToolResult } from "./types.js";

/** An integer argument in [min, max] (fractions are floored), or `fallback` when absent. */
export function intInRange(
	name: string,
	value: number | undefined,
	fallback: number,
	min: number,
	max: number,
): number {
	if (value === undefined) return fallback;
	if (!Number.isFinite(value) || value < min || value > max) {
		throw new KeelError("INVALID_ARGS", `${name} must be a number from ${min} to ${max} (got ${value}).`);
	}
	return Math.floor(value);
}

export const GREP_MAX_CONTEXT = 100;
export const GREP_MAX_LIMIT = 10_000;
export const FIND_MAX_LIMIT = 100_000;
export const LS_MAX_LIMIT = 100_000;
/** read's offset and limit: any line number a file can have. */
export const READ_MAX_LINES = Number.MAX_SAFE_INTEGER;

/** A search stopped by its time budget answers TIMEOUT, carrying what it had found. */
export function timedOutOr(tool: string, timedOut: boolean | undefined, result: ToolResult): ToolResult {
	if (!timedOut) return result;
	const found = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
	throw new KeelError(
		"TIMEOUT",
		`${tool} stopped at its time budget; narrow the path, glob or pattern. Found until then:\n\n${found}`,
	);
}
