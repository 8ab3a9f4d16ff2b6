/** Types of corpus.mjs and score.mjs (plain JS, shared with bench/cases-drift.mjs). */
export type Rung = "exact" | "normalized" | "indentation" | "blankLines" | "unescaped" | "spacing" | "compat";

export interface DriftCase {
	category: string;
	name: string;
	/** The file before the edit. */
	file: string;
	edits: Array<{ oldText: string; newText: string }>;
	/** The exact file afterwards and the rung keel must report (one per edit), or the refusal. */
	expect: { file: string; rung: Rung | Rung[] } | { refuse: "NO_MATCH" | "AMBIGUOUS_MATCH" };
}

export declare const CASES: DriftCase[];

/** A drift case sent as an apply_patch patch (its path written FILE). */
export interface PatchCase {
	category: "patch";
	name: string;
	file: string;
	patch: string;
	expect: { file: string; rungs: string[] } | { refuse: "NO_MATCH" | "AMBIGUOUS_MATCH" };
}

export declare const PATCH_CASES: PatchCase[];
