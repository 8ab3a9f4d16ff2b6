/**
 * The checkers' last results, kept as the baseline of a file's next change: each with the texts
 * (by SHA-256) of the files it saw, so a later change whose files still have exactly those texts
 * needs no run before it. Apart from the diagnostics because when a result may be kept (no other
 * change committed during its run) and what it covers is a rule of its own.
 */
import { createHash } from "node:crypto";
import { type Checker, perFile } from "./checkers.js";
import type { OkRun, Placed } from "./run.js";

/** Files whose texts a kept result remembers (past it, the memory starts again). */
const MAX_SEEN_FILES = 10_000;

/** A checker's last result and the texts (by SHA-256) of the files it saw, as far as keel knows them. */
export interface Kept {
	errors: Placed[];
	outsideRoots: number;
	seen: Map<string, string>;
}

const ABSENT = "absent";
export const hashOf = (text: string | undefined) =>
	text === undefined ? ABSENT : createHash("sha256").update(text).digest("base64");

/** The kept results of one session's checkers, by checker name, and the count of changes committed. */
export class KeptResults {
	private readonly results = new Map<string, Kept>();
	/** Changes committed through the session's diagnostics: a run that another one overlapped is not kept. */
	private commits = 0;

	/** How many changes were committed so far (taken when a run begins). */
	get committed(): number {
		return this.commits;
	}

	/** Counts one more committed change; its number. */
	commit(): number {
		return ++this.commits;
	}

	get(checker: string): Kept | undefined {
		return this.results.get(checker);
	}

	delete(checker: string): void {
		this.results.delete(checker);
	}

	/** Keeps `run` as the checker's last result, with the texts of the files it saw. */
	keep(
		checker: Checker,
		run: OkRun,
		hashes: Map<string, string>,
		prior: Kept | undefined,
		since: number,
	): void {
		// Another change committed since the run began: it may have seen it or not; nothing is kept.
		if (this.commits !== since) return void this.results.delete(checker.name);
		// A checker of the files it is given says nothing of the others: its result covers its run's files only.
		const carried = prior && !perFile(checker) && prior.seen.size < MAX_SEEN_FILES;
		const seen = carried ? new Map(prior.seen) : new Map<string, string>();
		for (const [k, h] of hashes) seen.set(k, h);
		this.results.set(checker.name, { errors: run.errors, outsideRoots: run.outsideRoots, seen });
	}
}
