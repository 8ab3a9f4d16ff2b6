/**
 * The protected set inside the sandbox: what safety/protected-paths.ts protects from keel's own
 * writes, found in the read-write roots before every command and mounted read-only.
 *
 * - Existing protected files and directories: bound read-only over themselves, after the roots'
 *   binds (by descriptor, like every bind: launch.ts).
 * - Each directory between a root and a protected path is bound over itself first: a mount point
 *   cannot be renamed or removed (EBUSY), so `mv .git .git.old && mkdir .git` (or the same one level
 *   up) cannot swap a writable copy in under the name git reads.
 * - A git dir without a hooks directory gets an empty one (what `git init` creates) so hooks that do
 *   not exist yet cannot be created either.
 * - Protected names that do not exist cannot be mounted without leaving a placeholder in the user's
 *   tree, so the set is found again after the command: anything protected that appeared during it
 *   (an .envrc, a .vscode, a config.worktree) is moved aside to NAME.keel-refused-XXXX, never
 *   deleted, and the command's output says so (protect-aside.ts).
 *
 * What keel itself changes on the host (a hooks directory made, a created path moved aside) it
 * changes through a handle on the directory, opened from the guard's pinned roots without following
 * a link (local/pin.ts): a directory swapped for a link makes keel refuse, never act outside.
 */
import { type Dirent, mkdirSync } from "node:fs";
import { lstat, readdir as readdirAt, realpath as realpathAt } from "node:fs/promises";
import { posix } from "node:path";
import {
	commonDirOf,
	configuredGitPaths,
	gitPath,
	isGitDir,
	parseGitConfig,
	resolveDotGit,
} from "../../safety/git-dirs.js";
import {
	GIT_DIR_FILES,
	GIT_HOOKS_DIR,
	HOME_ENTRIES,
	isDotGit,
	PROTECTED_NAMES,
	protectedByName,
} from "../../safety/protected-paths.js";
import { createLocalFs } from "../local/fs.js";
import { DirPins } from "../local/pin.js";
import type { FileOps } from "../types.js";
import type { Bind } from "./sandbox.js";
import type { ScanRecord } from "./scan-record.js";

/** How many directories one scan reads at most (a larger tree is scanned this far, and the docs say so). */
export const MAX_SCAN_DIRS = 20_000;

/**
 * Not searched for nested protected names: package trees whose .vscode or .git belong to the
 * packages, and which are the bulk of most workspaces (their top-level entries still are).
 */
const SKIPPED_DIRS: ReadonlySet<string> = new Set(["node_modules"]);

export interface ProtectOptions {
	/** Canonical read-write roots (only paths inside them need protecting: nothing else is writable). */
	roots: readonly string[];
	home: string;
	/** More protected paths (absolute, canonical where they exist). */
	extra?: readonly string[];
	/** The guard's pinned roots, through which a missing hooks directory is made (default: none, walks from "/"). */
	pins?: DirPins;
}

export interface ProtectedScan {
	/** Protected paths that exist (canonical, inside a root), shortest first. */
	existing: string[];
	/** Protected paths that do not exist yet, checked again after the command. */
	absent: string[];
	/** The git directories found (canonical). */
	gitDirs: string[];
	/** Whether the directory cap stopped the scan. */
	truncated: boolean;
}

export function within(parent: string, child: string): boolean {
	return child === parent || child.startsWith(parent === "/" ? "/" : `${parent}/`);
}

export async function typeAt(path: string): Promise<"dir" | "file" | "symlink" | "other" | undefined> {
	try {
		const st = await lstat(path);
		if (st.isSymbolicLink()) return "symlink";
		if (st.isDirectory()) return "dir";
		return st.isFile() ? "file" : "other";
	} catch {
		return undefined;
	}
}

/** What the scan does with entry `name` of directory `dir` (the kept scan's watches ask the same). */
export function entryRole(dir: string, name: string, isDir: boolean): "git" | "note" | "descend" | undefined {
	if (isDotGit(name)) return "git";
	if (protectedByName(name, isDir, posix.basename(dir))) return "note";
	if (isDir && !SKIPPED_DIRS.has(name)) return "descend";
	return undefined;
}

/**
 * Finds the protected set in the roots (see the module comment). With `record`, every path the
 * scan reads is recorded before it is read (protect-cache.ts keeps the answer while they stay).
 */
export async function scanProtected(opts: ProtectOptions, record?: ScanRecord): Promise<ProtectedScan> {
	const fs: FileOps = record ? record.wrap(createLocalFs()) : createLocalFs();
	const touch = (path: string) => record?.touch(path);
	const typeOf = (path: string) => {
		record?.lookup(path);
		return typeAt(path);
	};
	const readdir = ((path: string, o?: { withFileTypes: true }) => {
		record?.list(path);
		return o ? readdirAt(path, o) : readdirAt(path);
	}) as typeof readdirAt;
	const realpath = async (path: string) => {
		touch(path);
		const r = await realpathAt(path);
		touch(r);
		return r;
	};
	const found = new Set<string>();
	const absent = new Set<string>();
	const gitDirs = new Map<string, string>(); // git dir -> the worktree top its relative paths use
	let truncated = false;
	let budget = MAX_SCAN_DIRS;

	// What exists is kept by its canonical path (a link on the way, or the entry itself a link,
	// resolved): that is what gets mounted, opened without following a link.
	const note = async (path: string) => {
		const type = await typeOf(path);
		if (type === undefined) absent.add(path);
		else {
			const canonical = await realpath(path).catch(() => undefined);
			if (canonical) found.add(canonical);
		}
	};
	const visitEntry = async (dir: string, e: Dirent, next: string[]) => {
		const path = posix.join(dir, e.name);
		const role = entryRole(dir, e.name, e.isDirectory());
		if (role === "git") {
			const g = await resolveDotGit(fs, path);
			if (g) gitDirs.set(g, dir);
			if (!e.isDirectory()) found.add(path); // the gitdir file or link itself
		} else if (role === "note") await note(path);
		else if (role === "descend") next.push(path);
	};
	// Breadth first, a level's directories read concurrently.
	let level: string[] = [...opts.roots];
	while (level.length > 0 && !truncated) {
		if (level.length > budget) {
			truncated = true;
			level = level.slice(0, budget);
		}
		budget -= level.length;
		record?.ahead(level.length);
		const next: string[] = [];
		await Promise.all(
			level.map(async (dir) => {
				// The names the scan does not use (a regular file, node_modules) are no change to it.
				record?.list(dir, (name, isDir) => entryRole(dir, name, isDir) !== undefined);
				const entries = await readdirAt(dir, { withFileTypes: true }).catch(() => [] as Dirent[]);
				for (const e of entries) await visitEntry(dir, e, next);
			}),
		);
		level = next;
	}
	for (const root of opts.roots) {
		for (const name of PROTECTED_NAMES) await note(posix.join(root, name));
	}
	for (const entry of HOME_ENTRIES) await note(posix.join(opts.home, entry));
	for (const p of opts.extra ?? []) await note(p);
	const workspace = opts.roots[0];
	if (workspace) {
		for (const p of await configuredGitPaths(fs, workspace, opts.home)) await note(p);
		for (let d = workspace; ; d = posix.dirname(d)) {
			const g = await resolveDotGit(fs, `${d}/.git`);
			if (g) {
				gitDirs.set(g, gitDirs.get(g) ?? d);
				break;
			}
			if (d === "/") break;
		}
	}
	const seen = new Set<string>();
	const visit = async (g: string, top: string, depth: number): Promise<void> => {
		if (seen.has(g) || depth > 8) return;
		seen.add(g);
		for (const f of GIT_DIR_FILES) await note(`${g}/${f}`);
		const hooks = `${g}/${GIT_HOOKS_DIR}`;
		if ((await typeOf(hooks)) === undefined && opts.roots.some((r) => within(r, g))) {
			atPinned(opts.pins, g, (dir) => mkdirSync(dir.at(GIT_HOOKS_DIR)));
		}
		await note(hooks);
		for (const f of ["config", "config.worktree"]) {
			const text = await fs.readFile(`${g}/${f}`).then(
				(b) => b.toString("utf8"),
				() => "",
			);
			const parsed = parseGitConfig(text);
			for (const h of parsed.hooksPath) await note(gitPath(h, top, opts.home));
			for (const i of parsed.includes) await note(gitPath(i, g, opts.home));
		}
		await visit(await commonDirOf(fs, g), top, depth + 1);
		for (const name of await readdir(`${g}/worktrees`).catch(() => [] as string[])) {
			const w = `${g}/worktrees/${name}`;
			const back = await fs.readFile(`${w}/gitdir`).then(
				(b) => posix.dirname(b.toString("utf8").trim()),
				() => w,
			);
			await visit(w, back, depth + 1);
		}
		await visitModules(`${g}/modules`, depth + 1);
	};
	const visitModules = async (dir: string, depth: number): Promise<void> => {
		if (depth > 8) return;
		for (const name of await readdir(dir).catch(() => [] as string[])) {
			const d = `${dir}/${name}`;
			if ((await typeOf(d)) !== "dir") continue;
			if (await isGitDir(fs, d)) await visit(d, d, depth);
			else await visitModules(d, depth + 1); // a submodule name with slashes
		}
	};
	for (const [g, top] of gitDirs) await visit(g, top, 0);

	const inRoots = (p: string) => opts.roots.some((r) => within(r, p) && p !== r);
	const existing = [...found].filter(inRoots).sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
	// A path below another protected path is covered by that one's mount.
	const covering = existing.filter((p, i) => !existing.slice(0, i).some((q) => within(q, p)));
	return {
		existing: covering,
		absent: [...absent].filter((p) => inRoots(p) && !covering.some((q) => within(q, p))),
		gitDirs: [...seen],
		truncated,
	};
}

/** The binds for a scan: each directory between a root and a protected path pinned, then the path read-only. */
export function protectBinds(scan: ProtectedScan, roots: readonly string[]): Bind[] {
	const binds: Bind[] = [];
	const pinned = new Set<string>();
	for (const p of scan.existing) {
		const root = roots.filter((r) => within(r, p)).sort((a, b) => b.length - a.length)[0];
		if (!root) continue;
		const chain: string[] = [];
		for (let d = posix.dirname(p); d !== root && within(root, d); d = posix.dirname(d)) chain.unshift(d);
		for (const d of chain) {
			if (pinned.has(d)) continue;
			pinned.add(d);
			binds.push({ source: d, target: d, readOnly: false, dir: true });
		}
		binds.push({ source: p, target: p, readOnly: true, dir: false });
	}
	return binds;
}

/**
 * Runs `act` on a handle of canonical directory `dir`, opened from the pinned roots without following
 * a link; false (nothing done) when it cannot be opened so or `act` fails.
 */
export function atPinned(
	pins: DirPins | undefined,
	dir: string,
	act: (d: ReturnType<DirPins["open"]>) => void,
): boolean {
	let pinned: ReturnType<DirPins["open"]>;
	try {
		pinned = (pins ?? new DirPins()).open(dir);
	} catch {
		return false;
	}
	try {
		act(pinned);
		return true;
	} catch {
		return false;
	} finally {
		pinned.release();
	}
}
