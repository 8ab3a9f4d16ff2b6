/**
 * What checkpoints leave out by rule: directories every tool regenerates or that belong to another
 * tool's own history (`.git` is never read or written), and what the workspace's `.gitignore` files
 * say. A `.gitignore` is workspace content, so it can only narrow what is kept, never widen what
 * keel touches; what was left out is named in the listing.
 */
import { createRequire } from "node:module";
import type { Ignore } from "ignore";

/** The `ignore` package, required on the first `.gitignore` met (a workspace without one never loads it). */
const requireHere = createRequire(import.meta.url);
const ignore = (): Ignore => (requireHere("ignore") as () => Ignore)();

/** Directory names left out wherever they are. */
export const ALWAYS_LEFT_OUT = new Set([
	".git",
	".hg",
	".svn",
	"node_modules",
	"__pycache__",
	".venv",
	".mypy_cache",
	".pytest_cache",
	".ruff_cache",
	".tox",
	".next",
	".turbo",
	".gradle",
]);

/** The `.gitignore` rules in force in one directory: its own file's and its ancestors'. */
export class IgnoreRules {
	private constructor(private readonly chain: ReadonlyArray<{ base: string; rules: Ignore }>) {}

	static empty(): IgnoreRules {
		return new IgnoreRules([]);
	}

	/** The rules for the directory `rel` (relative to the root), given its `.gitignore` text. */
	child(rel: string, gitignore: string | undefined): IgnoreRules {
		if (gitignore === undefined) return this;
		return new IgnoreRules([...this.chain, { base: rel, rules: ignore().add(gitignore) }]);
	}

	/** Whether the entry `rel` (relative to the root) is left out; `dir` says it is a directory. */
	leavesOut(rel: string, name: string, dir: boolean): boolean {
		if (dir && ALWAYS_LEFT_OUT.has(name)) return true;
		for (const { base, rules } of this.chain) {
			const sub = base === "" ? rel : rel.slice(base.length + 1);
			if (rules.ignores(dir ? `${sub}/` : sub)) return true;
		}
		return false;
	}
}
