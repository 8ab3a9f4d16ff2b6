/**
 * The range of every numeric tool argument: the schema checker refuses a value
 * outside it with INVALID_ARGS naming the range, before the tool runs. docs/SAFETY.md lists them.
 *
 * Timeouts are in seconds, up to a year: Node's timers overflow at 2^31 ms (24.8 days) and fire at
 * once, so the backends chain timers (boundary/timing.ts) and a long timeout means long.
 */
import type { NumericRange } from "../boundary/schema.js";

/** A year in seconds: the longest timeout or wait keel accepts. */
export const MAX_TIMEOUT_SECONDS = 365 * 24 * 60 * 60;

export const RANGES = {
	/** read offset, file edits' startLine/endLine. */
	lineNumber: { minimum: 1, maximum: 1_000_000_000 },
	/** read limit. */
	lineCount: { minimum: 1, maximum: 1_000_000_000 },
	/** grep, find and ls limits: more than this never fits in one bounded result anyway. */
	resultCount: { minimum: 1, maximum: 100_000 },
	/** grep context lines before and after each match. */
	contextLines: { minimum: 0, maximum: 1_000 },
	/** bash and python timeouts. */
	timeoutSeconds: { exclusiveMinimum: 0, maximum: MAX_TIMEOUT_SECONDS, unit: "seconds" },
	/** The codex profile's shell timeout_ms (the same year as timeoutSeconds). */
	timeoutMs: { exclusiveMinimum: 0, maximum: MAX_TIMEOUT_SECONDS * 1000, unit: "milliseconds" },
	/** python_jobs wait (0: look once, do not wait). */
	waitSeconds: { minimum: 0, maximum: MAX_TIMEOUT_SECONDS, unit: "seconds" },
} as const satisfies Record<string, NumericRange>;
