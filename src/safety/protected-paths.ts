/**
 * The protected set: files that run code or are trusted without asking, so a write to them is a
 * way out of the roots the next time the user runs git, opens an editor or a shell. The one place
 * that decides it: the path guard asks `ProtectedPaths.reason` before every write, and the bwrap
 * sandbox mounts what `bwrap/protect.ts` finds from the same lists and rules read-only.
 *
 * Names are compared folded (`foldName`): the way the loosest file system keel may write to
 * compares them (case-insensitive exFAT, FAT, APFS, NTFS, ext4 with casefold). A case-sensitive
 * file system thereby refuses a few spellings no tool reads (`.ENVRC`); probing each directory
 * instead would be a race, since code in the sandbox can turn casefold on for an empty directory.
 *
 * What is in it, and which tool executes each entry, is in docs/SAFETY.md ("Protected paths").
 * Finding git directories and what their config names is in git-dirs.ts.
 */
import { posix } from "node:path";
import type { FileOps } from "../backend/types.js";
import { configuredGitPaths, GIT_HEAD, hasGitHead } from "./git-dirs.js";

/**
 * `name` as every file system keel writes to would compare it: Unicode compatibility-decomposed,
 * default-ignorable code points dropped (HFS+ ignores them), case folded (`ſ` and `K` too), trailing
 * dots and spaces dropped (Windows file systems ignore them).
 */
export function foldName(name: string): string {
	// ASCII without upper case, dots or spaces at the end is its own fold (nearly every name).
	if (/^[\x21-\x40\x5b-\x7e]*$/.test(name) && !/[. ]$/.test(name)) return name;
	return name
		.normalize("NFKD")
		.replace(/\p{Default_Ignorable_Code_Point}/gu, "")
		.toUpperCase()
		.toLowerCase()
		.replace(/[. ]+$/, "");
}

/** A path with every component folded (see foldName). */
export function foldPath(path: string): string {
	return path.split("/").map(foldName).join("/");
}

/** `child` is `parent` or below it, by folded components. */
function isWithin(parent: string, child: string): boolean {
	const rel = posix.relative(foldPath(parent), foldPath(child));
	return rel === "" || (!posix.isAbsolute(rel) && rel.split("/", 1)[0] !== "..");
}

/**
 * Protected wherever they appear, with everything below them: project files that an editor, an
 * agent, a shell hook or a git hook runner reads and acts on without asking.
 */
export const PROTECTED_NAMES: ReadonlySet<string> = new Set([
	".vscode", // tasks.json runs on folder open, settings.json names shells and interpreters
	".idea",
	".zed", // tasks and language-server commands
	".helix", // languages.toml names language-server commands
	".claude", // agent settings and hooks
	".codex",
	".pi",
	".mcp.json", // MCP servers an agent starts
	".envrc", // direnv
	".exrc", // vi and vim with 'exrc'
	".nvimrc", // neovim with 'exrc'
	".nvim.lua",
	".husky", // git hooks through core.hooksPath
	".lefthook", // lefthook's scripts
	".pre-commit-config.yaml", // pre-commit: every hook's command
	".pre-commit-config.yml",
	"lefthook.yml",
	"lefthook.yaml",
	"lefthook.json",
	"lefthook.toml",
	".lefthook.yml",
	".lefthook.yaml",
	".lefthook.json",
	".lefthook.toml",
	"lefthook-local.yml",
	"lefthook-local.yaml",
	".lefthook-local.yml",
	".lefthook-local.yaml",
	".overcommit.yml",
	".simple-git-hooks.json",
	".simple-git-hooks.js",
	".simple-git-hooks.cjs",
	"simple-git-hooks.json",
	"simple-git-hooks.js",
	"simple-git-hooks.cjs",
	".lintstagedrc", // lint-staged: commands run at commit time
	".lintstagedrc.json",
	".lintstagedrc.yaml",
	".lintstagedrc.yml",
	".lintstagedrc.js",
	".lintstagedrc.cjs",
	".lintstagedrc.mjs",
	"lint-staged.config.js",
	"lint-staged.config.cjs",
	"lint-staged.config.mjs",
]);

/**
 * Start-up files, protected by name anywhere (they run when a shell, a session or an editor starts
 * in the home they are in): the files shells read, those the usual default rc files source, X
 * session scripts, editors' init files.
 */
export const SHELL_RC_FILES: ReadonlySet<string> = new Set([
	".bashrc",
	".bash_profile",
	".bash_login",
	".bash_logout",
	".bash_aliases", // sourced by Debian's and Ubuntu's default .bashrc
	".profile",
	".zshrc",
	".zshenv",
	".zprofile",
	".zlogin",
	".zlogout",
	".cshrc",
	".tcshrc",
	".login", // csh and tcsh login shells
	".logout",
	".kshrc",
	".mkshrc",
	".inputrc",
	".pam_environment",
	".xprofile",
	".xinitrc",
	".xsession",
	".xsessionrc",
	".vimrc",
	".gvimrc",
	".emacs",
	".emacs.el",
]);

/** Entries of a git directory that git executes or reads as configuration. */
export const GIT_DIR_FILES = ["config", "config.worktree", "commondir"] as const;
export const GIT_HOOKS_DIR = "hooks";

/** Relative to the home directory, when the home is inside the roots: each with everything below it. */
export const HOME_ENTRIES = [
	".gitconfig",
	".git-credentials",
	".config/git",
	".ssh",
	".gnupg",
	".npmrc",
	".claude.json",
	".bashrc.d", // sourced by Fedora's default .bashrc
	".config/fish",
	".config/environment.d", // the user's systemd environment (LD_PRELOAD, PATH)
	".config/systemd",
	".config/autostart",
	".config/nvim",
	".local/share/nvim", // packages neovim loads at start
	".vim", // plugin/, ftplugin/, autoload/
	".emacs.d",
	".config/emacs",
	".local/bin", // on PATH in Debian's default .profile: a file there shadows a command
	"bin",
] as const;

const FOLDED_NAMES: ReadonlySet<string> = new Set([...PROTECTED_NAMES].map(foldName));
const FOLDED_RC_FILES: ReadonlySet<string> = new Set([...SHELL_RC_FILES].map(foldName));
const FOLDED_GIT_FILES: ReadonlySet<string> = new Set(GIT_DIR_FILES.map(foldName));
const FOLDED_HOME_ENTRIES = HOME_ENTRIES.map((e) => ({ entry: e, folded: foldPath(e) }));
const DOT_GIT = ".git";
const FOLDED_HEAD = foldName(GIT_HEAD);

/** Whether entry `name` (of a directory named `parent`) is protected by its name alone (the bwrap scan asks the same). */
export function protectedByName(name: string, isDir: boolean, parent: string): boolean {
	const f = foldName(name);
	if (FOLDED_NAMES.has(f)) return true;
	if (FOLDED_RC_FILES.has(f) && !isDir) return true;
	return f === "config.fish" && foldName(parent) === "fish";
}

/** Whether `name` is a `.git` entry, in any spelling a file system takes for it. */
export function isDotGit(name: string): boolean {
	return foldName(name) === DOT_GIT;
}

/**
 * Why `relative` (inside a root) is protected by name alone, or undefined. Besides the lists, the
 * path guard's half of the git rule, which must not depend on the order of writes: a directory
 * becomes a git directory when it gets a HEAD, whether its hooks and config came before or after.
 * So the tools never write a file named HEAD (git writes it, through bash), and hooks and config
 * are protected in every directory that has one (`ProtectedPaths.reason`). Checking the HEAD
 * against the directory's other entries instead would race with a concurrent write of those.
 */
export function nameRule(relative: string): string | undefined {
	const parts = relative.split("/").filter(Boolean).map(foldName);
	const last = parts.length - 1;
	if (last >= 0 && parts[last] === FOLDED_HEAD) return "HEAD (it makes its directory a git directory)";
	for (let i = 0; i <= last; i++) {
		const name = parts[i];
		if (FOLDED_NAMES.has(name)) return `${name} (tool configuration that runs code)`;
		if (name !== DOT_GIT) continue;
		if (i === last) return ".git (which git directory git uses)";
		// Below a .git directory: its hooks and config files, and those of the git directories
		// nested in it (modules/NAME, worktrees/NAME).
		for (let j = i + 1; j <= last; j++) {
			if (parts[j] === GIT_HOOKS_DIR) return "git hooks";
		}
		if (FOLDED_GIT_FILES.has(parts[last])) return "git configuration";
	}
	if (last >= 0 && FOLDED_RC_FILES.has(parts[last]))
		return "start-up file (a shell, session or editor runs it)";
	if (last >= 1 && parts[last - 1] === "fish" && parts[last] === "config.fish") return "shell start-up file";
	return undefined;
}

/** Why `path` (absolute) is protected as part of the home directory `home`, or undefined. */
export function homeRule(home: string, path: string): string | undefined {
	if (!isWithin(home, path) || foldPath(home) === foldPath(path)) return undefined;
	const rel = posix.relative(foldPath(home), foldPath(path));
	for (const { entry, folded } of FOLDED_HOME_ENTRIES) {
		if (rel === folded || rel.startsWith(`${folded}/`)) return `~/${entry} (user configuration)`;
	}
	return undefined;
}

/**
 * The directories `parts` (below `base`) would be hooks or config of: each ancestor D such that
 * the rest of the path is D/hooks[/...] or D/config (etc.). Only those need a look at D, so a write
 * to an ordinary path costs no file-system call here.
 */
export function gitDirCandidates(base: string, parts: string[]): string[] {
	const out: string[] = [];
	const folded = parts.map(foldName);
	const last = folded.length - 1;
	for (let k = 0; k <= last; k++) {
		const isMember = folded[k] === GIT_HOOKS_DIR || (k === last && FOLDED_GIT_FILES.has(folded[k]));
		if (isMember) out.push(posix.join(base, ...parts.slice(0, k)));
	}
	return out;
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
	/** The home directory normalized and folded, for a prefix test before homeRule's path arithmetic. */
	private readonly home: string;

	constructor(
		private readonly fs: FileOps,
		private readonly cfg: ProtectedPathsConfig,
	) {
		this.home = foldPath(posix.resolve(cfg.home));
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
		const inHome = foldPath(canonical).startsWith(this.home);
		const byName = nameRule(relative) ?? (inHome ? homeRule(this.cfg.home, canonical) : undefined);
		if (byName) return byName;
		// Hooks and config are protected in any directory with a HEAD (nameRule refuses writing a
		// HEAD at all): see nameRule.
		const candidates = gitDirCandidates(root, relative.split("/").filter(Boolean));
		if (candidates.length > 0) {
			const found = await Promise.all(candidates.map((d) => hasGitHead(this.fs, d)));
			if (found.some(Boolean)) return "git hooks or configuration (its directory has a HEAD)";
		}
		this.configured ??= configuredGitPaths(this.fs, this.cfg.workspace, this.cfg.home);
		for (const p of await this.configured) {
			if (isWithin(p, canonical)) return `git hooks or configuration (named by git config: ${p})`;
		}
		return undefined;
	}
}
