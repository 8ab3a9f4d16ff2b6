import type { DriftCase } from "./corpus.d.mts";

export type Score = "right" | "missed" | "wrong";

export interface ToolOutcome {
	ok: boolean;
	code?: string;
	message?: string;
	matched?: string[];
}

export type Apply = (
	path: string,
	edits: Array<{ oldText: string; newText: string }>,
) => Promise<ToolOutcome>;

export declare function runCase(
	c: DriftCase,
	dir: string,
	name: string,
	apply: Apply,
): Promise<{ score: Score; outcome: ToolOutcome; after: string }>;

/** pi's tool definition: execute(toolCallId, args, signal, onUpdate, ctx). */
export declare function piApply(def: { execute: (...args: any[]) => Promise<unknown> }): Apply;

export declare function keelApply(session: {
	call(
		name: string,
		args: unknown,
	): Promise<{ ok: true; details?: unknown } | { ok: false; error: { code: string; message: string } }>;
}): Apply;

export interface ScoreRow {
	category: string;
	name: string;
	keel: Score;
	pi: Score;
}

export declare function scoreTable(rows: ScoreRow[]): string;
