/**
 * Where git finds code and configuration for a workspace: git's own test for a git directory, the
 * `.git` entry resolved (a directory, a link, a `gitdir:` file), the common directory, and the
 * hook directories and included files git config names. Apart from the protected set's name
 * rules (protected-paths.ts) because this is the part that reads the file system and git's formats.
 */
import { posix } from "node:path";
import type { FileOps } from "../backend/types.js";

/** The one entry every git directory has (git's own test starts with it). */
export const GIT_HEAD = "HEAD";

/** The type of what is at `path` (not followed), or undefined when nothing is. */
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

/** Whether `dir` has a HEAD: every git directory has one, so protection cannot wait for the rest. */
export async function hasGitHead(fs: FileOps, dir: string): Promise<boolean> {
	const head = await kind(fs, `${dir}/${GIT_HEAD}`);
	return head === "file" || head === "symlink";
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
