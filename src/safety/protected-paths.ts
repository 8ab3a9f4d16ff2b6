/**
 * The protected set (REQUIREMENTS P2): files that run code or are trusted without asking, so a
 * write to them is a way out of the roots the next time the user runs git, opens an editor or a
 * shell. The one place that decides it: the path guard asks `ProtectedPaths.reason` before every
 * write, and the bwrap sandbox mounts what `protected-scan.ts` finds from the same rules read-only.
 *
 * What is in it, and where the list came from, is in docs/SAFETY.md ("Protected paths").
 */
import { posix } from "node:path";
import type { FileOps } from "../backend/types.js";

/** `child` is `parent` or below it (the path guard's test; kept here so the two modules do not import each other). */
function isWithin(parent: string, child: string): boolean {
	const rel = posix.relative(parent, child);
	return rel === "" || (!posix.isAbsolute(rel) && rel.split("/", 1)[0] !== "..");
}

/** Directories and files protected wherever they appear (the whole subtree of a directory). */
export const PROTECTED_NAMES: ReadonlySet<string> = new Set([
	".vscode", // tasks.json runs on folder open, settings.json names shells and interpreters
	".idea",
	".claude", // agent settings and hooks
	".codex",
	".pi",
	".husky", // git hooks through core.hooksPath
	".envrc", // direnv
	".mcp.json", // MCP servers an agent starts
]);

/** Shell start-up files, protected by name anywhere (they run when a shell starts in that home). */
export const SHELL_RC_FILES: ReadonlySet<string> = new Set([
	".bashrc",
	".bash_profile",
	".bash_login",
	".bash_logout",
	".profile",
	".zshrc",
	".zshenv",
	".zprofile",
	".zlogin",
	".zlogout",
	".cshrc",
	".tcshrc",
	".kshrc",
	".inputrc",
]);

/** Entries of a git directory that git executes or reads as configuration. */
export const GIT_DIR_FILES = ["config", "config.worktree", "commondir"] as const;
export const GIT_HOOKS_DIR = "hooks";

/** Relative to the home directory, when the home is inside the roots. */
export const HOME_ENTRIES = [
	".gitconfig",
	".git-credentials",
	".config/git",
	".ssh",
	".gnupg",
	".npmrc",
	".config/fish",
	".config/systemd",
	".config/autostart",
	".claude.json",
] as const;

/** Why `relative` (inside a root) is protected by name alone, or undefined. */
export function nameRule(relative: string): string | undefined {
	const parts = relative.split("/").filter(Boolean);
	const last = parts.length - 1;
	for (let i = 0; i <= last; i++) {
		const name = parts[i];
		if (PROTECTED_NAMES.has(name)) return `${name} (tool configuration that runs code)`;
		if (name !== ".git") continue;
		if (i === last) return ".git (which git directory git uses)";
		// Below a .git directory: its hooks and config files, and those of the git directories
		// nested in it (modules/NAME, worktrees/NAME).
		for (let j = i + 1; j <= last; j++) {
			if (parts[j] === GIT_HOOKS_DIR) return "git hooks";
		}
		if ((GIT_DIR_FILES as readonly string[]).includes(parts[last])) return "git configuration";
	}
	if (last >= 0 && SHELL_RC_FILES.has(parts[last])) return "shell start-up file";
	if (last >= 1 && parts[last - 1] === "fish" && parts[last] === "config.fish") return "shell start-up file";
	return undefined;
}

/** Why `path` (absolute) is protected as part of the home directory `home`, or undefined. */
export function homeRule(home: string, path: string): string | undefined {
	if (!isWithin(home, path) || home === path) return undefined;
	const rel = posix.relative(home, path);
	for (const entry of HOME_ENTRIES) {
		if (rel === entry || rel.startsWith(`${entry}/`)) return `~/${entry} (user configuration)`;
	}
	return undefined;
}

async function kind(fs: FileOps, path: string): Promise<string | undefined> {
	try {
		return (await fs.lstat(path)).type;
	} catch {
		return undefined;
	}
}

/** git's own test for a git directory: a HEAD, and objects or a commondir (a linked worktree's). */
export async function isGitDir(fs: FileOps, dir: string): Promise<boolean> {
	const [head, objects, commondir] = await Promise.all([
		kind(fs, `${dir}/HEAD`),
		kind(fs, `${dir}/objects`),
		kind(fs, `${dir}/commondir`),
	]);
	if (head !== "file" && head !== "symlink") return false;
	return objects === "dir" || commondir === "file";
}

/**
 * The git directories whose hooks or config `parts` (below `base`) would be: each ancestor D such
 * that the rest of the path is D/hooks/... or D/config (etc.). Only those need the git-dir test, so
 * a write to an ordinary path costs no file-system call here.
 */
export function gitDirCandidates(base: string, parts: string[]): string[] {
	const out: string[] = [];
	const last = parts.length - 1;
	for (let k = 0; k <= last; k++) {
		const isMember =
			(parts[k] === GIT_HOOKS_DIR && k < last) ||
			(k === last && (GIT_DIR_FILES as readonly string[]).includes(parts[k]));
		if (isMember) out.push(posix.join(base, ...parts.slice(0, k)));
	}
	return out;
}

/** `[core] hooksPath` and `[include]/[includeIf] path` values of a git config text. */
export function parseGitConfig(text: string): { hooksPath: string[]; includes: string[] } {
	const hooksPath: string[] = [];
	const includes: string[] = [];
	let section = "";
	for (const raw of text.split(/\r?\n/)) {
		const line = raw.trim();
		const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]\s*(.*)$/.exec(line);
		let rest = line;
		if (header) {
			section = header[1].toLowerCase();
			rest = header[2];
		}
		const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(rest);
		if (!kv) continue;
		const key = kv[1].toLowerCase();
		let value = kv[2].replace(/\s+[#;].*$/, "").trim();
		if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
		if (value === "") continue;
		if (section === "core" && key === "hookspath") hooksPath.push(value);
		if ((section === "include" || section === "includeif") && key === "path") includes.push(value);
	}
	return { hooksPath, includes };
}

/** `~/x` in the home, relative against `base`. */
export function gitPath(value: string, base: string, home: string): string {
	if (value === "~") return home;
	if (value.startsWith("~/")) return posix.join(home, value.slice(2));
	return posix.resolve(base, value);
}

export interface ProtectedPathsConfig {
	/** The workspace root (the first read-write root). */
	workspace: string;
	home: string;
	/** More protected paths (absolute, canonical where they exist): each with everything below it. */
	extra?: readonly string[];
}

/**
 * The path guard's view of the protected set. Per write: the name rules, the home rules, the
 * listed paths, and the git-dir test for the few ancestors a path could be hooks or config of.
 * Hook directories named by `core.hooksPath` are read once (on the first write) from the
 * workspace's git config, the user's ~/.gitconfig and the files they include.
 */
export class ProtectedPaths {
	private configured: Promise<string[]> | undefined;
	/** The home directory normalized, for a prefix test before homeRule's path arithmetic. */
	private readonly home: string;

	constructor(
		private readonly fs: FileOps,
		private readonly cfg: ProtectedPathsConfig,
	) {
		this.home = posix.resolve(cfg.home);
	}

	/**
	 * Why writing `canonical` (inside `root`; `relative` to it, when the caller has it) is refused,
	 * or undefined when it may be written.
	 */
	async reason(
		canonical: string,
		root: string,
		relative = posix.relative(root, canonical),
	): Promise<string | undefined> {
		for (const p of this.cfg.extra ?? []) {
			if (isWithin(p, canonical)) return `listed as protected (${p})`;
		}
		// A canonical path can only be in the home when it starts with it (most writes are not).
		const inHome = canonical.startsWith(this.home);
		const byName = nameRule(relative) ?? (inHome ? homeRule(this.cfg.home, canonical) : undefined);
		if (byName) return byName;
		const candidates = gitDirCandidates(root, relative.split("/").filter(Boolean));
		if (candidates.length > 0) {
			const found = await Promise.all(candidates.map((d) => isGitDir(this.fs, d)));
			if (found.some(Boolean)) return "git hooks or configuration";
		}
		this.configured ??= configuredGitPaths(this.fs, this.cfg.workspace, this.cfg.home);
		for (const p of await this.configured) {
			if (isWithin(p, canonical)) return `git hooks or configuration (named by git config: ${p})`;
		}
		return undefined;
	}
}

/**
 * Paths git config files name as code or configuration: `core.hooksPath` directories and included
 * config files, from the workspace repository's config and config.worktree (and its common
 * directory's), ~/.gitconfig, ~/.config/git/config, and what those include.
 */
export async function configuredGitPaths(fs: FileOps, workspace: string, home: string): Promise<string[]> {
	const found = await findWorkspaceGitDir(fs, workspace);
	const configs: { file: string; top: string }[] = [
		{ file: posix.join(home, ".gitconfig"), top: workspace },
		{ file: posix.join(home, ".config/git/config"), top: workspace },
	];
	if (found) {
		for (const dir of new Set([found.gitDir, found.commonDir])) {
			configs.push(
				{ file: `${dir}/config`, top: found.top },
				{ file: `${dir}/config.worktree`, top: found.top },
			);
		}
	}
	const out: string[] = [];
	const collect = async (file: string, top: string, depth: number): Promise<void> => {
		if (depth > 4) return;
		let text: string;
		try {
			text = (await fs.readFile(file)).subarray(0, 1 << 20).toString("utf8");
		} catch {
			return;
		}
		const parsed = parseGitConfig(text);
		for (const h of parsed.hooksPath) out.push(gitPath(h, top, home));
		await Promise.all(
			parsed.includes.map((inc) => {
				const included = gitPath(inc, posix.dirname(file), home);
				out.push(included);
				return collect(included, top, depth + 1);
			}),
		);
	};
	await Promise.all(configs.map((c) => collect(c.file, c.top, 0)));
	return out;
}

/** Where git would find the repository for `dir`: the nearest `.git` above it (dir, link or gitdir file). */
export async function findWorkspaceGitDir(
	fs: FileOps,
	dir: string,
): Promise<{ top: string; gitDir: string; commonDir: string } | undefined> {
	for (let d = dir; ; d = posix.dirname(d)) {
		const gitDir = await resolveDotGit(fs, `${d}/.git`);
		if (gitDir) return { top: d, gitDir, commonDir: await commonDirOf(fs, gitDir) };
		if (d === "/") return undefined;
	}
}

/** The git directory a `.git` entry stands for: the directory, a link's target, a `gitdir:` file's path. */
export async function resolveDotGit(fs: FileOps, dotGit: string): Promise<string | undefined> {
	const type = await kind(fs, dotGit);
	if (type === "dir") return dotGit;
	if (type === "symlink") return fs.realpath(dotGit).catch(() => undefined);
	if (type !== "file") return undefined;
	const text = await fs.readFile(dotGit).then(
		(b) => b.subarray(0, 4096).toString("utf8"),
		() => "",
	);
	const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
	if (!m) return undefined;
	const target = posix.resolve(posix.dirname(dotGit), m[1]);
	return fs.realpath(target).catch(() => target);
}

/** A git directory's common directory (itself, unless a `commondir` file names another). */
export async function commonDirOf(fs: FileOps, gitDir: string): Promise<string> {
	const text = await fs.readFile(`${gitDir}/commondir`).then(
		(b) => b.subarray(0, 4096).toString("utf8").trim(),
		() => "",
	);
	if (!text) return gitDir;
	const target = posix.resolve(gitDir, text);
	return fs.realpath(target).catch(() => target);
}
