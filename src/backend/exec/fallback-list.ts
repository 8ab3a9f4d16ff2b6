/**
 * The search fallback's view of a target without rg/fd: the tree below the search root listed in
 * one call (find -printf), with the ignore files and .git directories of its ancestors, and file
 * contents fetched in batches (base64: framing that survives any byte).
 */
import { backendFact } from "../../boundary/backend-facts.js";
import { pathFact } from "../../boundary/path-facts.js";
import { fromSystemError } from "../../boundary/system-errors.js";
import { fillPlaceholders, hostProgram, readHostFile } from "../remote/host-programs.js";
import { joinPath } from "../search/ignore-rules.js";
import { comparePaths, throwIfAborted } from "../search/semantics.js";
import { EXIT, errnoError } from "./errors.js";
import { execPlaceholders } from "./scripts.js";
import { type ExecTransport, runScript } from "./transport.js";

export type Kind = "file" | "dir" | "symlink" | "other";

interface Node {
	name: string;
	kind: Kind;
	size: number;
}

export interface Listing {
	/** The search path is a file, not a directory. */
	isFile: boolean;
	/** Children per directory, relative to the search root ("" is the root), sorted like walk.ts. */
	tree: Map<string, Node[]>;
	/** Ancestor ignore files (absolute path → text) and ancestor directories holding `.git`. */
	files: Map<string, string>;
	gitDirs: Set<string>;
}

/** The listing (exec_list_tree.sh): ROOT CUSTOM_IGNORE_NAME ANCESTORS... */
const listScript = hostProgram(() => fillPlaceholders(readHostFile("exec_list_tree.sh"), execPlaceholders()));

/** One record per argument: "1" + base64 of the file, or "0" when it is not a readable file. */
const fetchScript = hostProgram(() => readHostFile("exec_fetch_files.sh"));

export const FETCH_MAX_FILES = 256;
export const FETCH_MAX_BYTES = 4 * 1024 * 1024;
export const FETCH_MAX_ARG_BYTES = 64 * 1024;
const KINDS: Record<string, Kind> = { f: "file", d: "dir", l: "symlink" };

/** The files at `paths` (undefined for one that is not a readable file), in one call. */
export async function fetchFiles(
	transport: ExecTransport,
	paths: string[],
	signal?: AbortSignal,
): Promise<(Buffer | undefined)[]> {
	if (paths.length === 0) return [];
	const r = await runScript(transport, fetchScript(), paths, { signal });
	throwIfAborted(signal);
	const recs = r.stdout.toString("latin1").split("\0");
	return paths.map((_, i) =>
		recs[i]?.startsWith("1") ? Buffer.from(recs[i].slice(1), "base64") : undefined,
	);
}

export function ancestorsOf(root: string): string[] {
	const dirs = ["/"];
	for (const part of root.split("/").filter(Boolean)) dirs.push(joinPath(dirs[dirs.length - 1], part));
	return dirs;
}

/** The tree below `root` and the ignore files above it, in one call. */
export async function listTree(
	transport: ExecTransport,
	root: string,
	custom: string,
	signal?: AbortSignal,
): Promise<Listing> {
	throwIfAborted(signal);
	const r = await runScript(transport, listScript(), [root, custom, ...ancestorsOf(root)], { signal });
	throwIfAborted(signal);
	if (r.exitCode === EXIT.ENOENT || r.exitCode === EXIT.ENOTDIR) {
		throw fromSystemError(errnoError(r.exitCode === EXIT.ENOENT ? "ENOENT" : "ENOTDIR", root), root);
	}
	if (r.exitCode === 127) {
		// Without base64 the ignore files could not be read: refuse rather than search what they hide.
		throw backendFact("search-fallback-needs-base64");
	}
	if (r.exitCode !== 0) {
		throw pathFact("listing-failed", root, { output: r.stderr.trim() });
	}
	const t = r.stdout.toString("utf8").split("\0");
	const out: Listing = { isFile: false, tree: new Map(), files: new Map(), gitDirs: new Set() };
	for (let i = 0; i < t.length; ) {
		const tag = t[i];
		if (tag === "T") {
			out.isFile = true;
			i += 2;
		} else if (tag === "G") {
			out.gitDirs.add(t[i + 1]);
			i += 2;
		} else if (tag === "I") {
			out.files.set(t[i + 1], Buffer.from(t[i + 2], "base64").toString("utf8"));
			i += 3;
		} else if (tag === "E") {
			const rel = t[i + 3];
			const slash = rel.lastIndexOf("/");
			const parent = slash < 0 ? "" : rel.slice(0, slash);
			const node = { name: rel.slice(slash + 1), kind: KINDS[t[i + 1]] ?? "other", size: Number(t[i + 2]) };
			const siblings = out.tree.get(parent);
			if (siblings) siblings.push(node);
			else out.tree.set(parent, [node]);
			i += 4;
		} else i++;
	}
	for (const nodes of out.tree.values()) nodes.sort((a, b) => comparePaths(a.name, b.name));
	return out;
}
