/**
 * Partial scans for checkpoints: the previous index with only the directories tree-watch.ts says
 * changed listed again, through the same walk as a full scan (tree-scan.ts). Each directory is
 * reached from its root one component at a time without following links, and the `.gitignore`
 * rules in force there are rebuilt from each directory on the way down.
 */
import { closeSync, openSync } from "node:fs";
import { posix } from "node:path";
import { IgnoreRules } from "./ignore-rules.js";
import { DIR_FLAGS, readGitignore, type ScanInput, type ScanResult, Walk } from "./tree-scan.js";

/**
 * A partial scan: the previous index with only the directories in `dirty` listed again (a new or
 * replaced directory below one of them is walked whole). A dirty directory that is gone, or is no
 * longer a directory, is left to its parent's listing (its parent has a change too). Returns
 * undefined when a directory's rules cannot be rebuilt (a `.gitignore` on its path changed): the
 * caller scans in full.
 */
export function rescanDirs(input: ScanInput, dirty: ReadonlySet<string>): ScanResult | undefined {
	const previous = input.previous;
	if (!previous) return undefined;
	const walk = new Walk(input, previous, new Map());
	// Shallow first: a parent's listing may walk a child whole, or drop it.
	const dirs = [...dirty].sort((a, b) => a.split("/").length - b.split("/").length);
	for (const dir of dirs) {
		const root = input.roots.find((r) => dir === r || dir.startsWith(`${r}/`));
		if (!root) continue;
		if (dir !== root && walk.result.index.get(dir)?.state.kind !== "dir") continue;
		const opened = openBelow(root, dir);
		if (opened === undefined) continue;
		try {
			const rules = rulesFor(root, dir);
			if (!rules) {
				// Put the previous index back as it was: the caller scans in full against it.
				for (const [p, e] of walk.result.priors ?? [])
					e === undefined ? previous.delete(p) : previous.set(p, e);
				return undefined;
			}
			walk.list(opened, dir, rules, posix.relative(root, dir));
		} finally {
			closeSync(opened);
		}
	}
	return walk.result;
}

/** `dir` below `root` opened one component at a time without following links; undefined when gone. */
function openBelow(root: string, dir: string): number | undefined {
	let fd: number;
	try {
		fd = openSync(root, DIR_FLAGS);
	} catch {
		return undefined;
	}
	for (const name of posix.relative(root, dir).split("/").filter(Boolean)) {
		try {
			const next = openSync(`/proc/self/fd/${fd}/${name}`, DIR_FLAGS);
			closeSync(fd);
			fd = next;
		} catch {
			closeSync(fd);
			return undefined;
		}
	}
	return fd;
}

/** The `.gitignore` rules in force in `dir`, read from each directory on the way down. */
function rulesFor(root: string, dir: string): IgnoreRules | undefined {
	let rules = IgnoreRules.empty();
	const parts = posix.relative(root, dir).split("/").filter(Boolean);
	for (let i = 0; i < parts.length; i++) {
		const ancestor = posix.join(root, ...parts.slice(0, i));
		const fd = openBelow(root, ancestor);
		if (fd === undefined) return undefined;
		try {
			rules = rules.child(parts.slice(0, i).join("/"), readGitignore(`/proc/self/fd/${fd}/.gitignore`));
		} finally {
			closeSync(fd);
		}
	}
	return rules;
}
