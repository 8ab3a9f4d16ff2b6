/** Finding rg and fd on a target and checking they have every flag the engines rely on. */
import { type ArgvRunner, runCollect } from "./runner.js";

export interface RgTool {
	path: string;
	version: string;
}

export interface FdTool {
	path: string;
	version: string;
	/** `--no-global-ignore-file` (fd ≥ 8.7): keeps ~/.config/fd/ignore out. */
	noGlobalIgnoreFile: boolean;
	/** `--no-require-git` (fd ≥ 8.7): .gitignore outside repositories too, as pi's find. */
	noRequireGit: boolean;
}

export interface NativeTools {
	rg?: RgTool;
	fd?: FdTool;
}

export function parseVersion(text: string): [number, number, number] | undefined {
	const m = /(\d+)\.(\d+)\.(\d+)/.exec(text);
	return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

async function versionAndHelp(run: ArgvRunner, path: string): Promise<[string, string] | undefined> {
	try {
		const [v, h] = await Promise.all([
			runCollect(run, [path, "--version"]),
			runCollect(run, [path, "--help"]),
		]);
		return [v.stdout.trim(), h.stdout];
	} catch {
		return undefined;
	}
}

/** A usable ripgrep at `path`, or undefined (not ripgrep, or lacking a flag we rely on). */
export async function probeRg(run: ArgvRunner, path: string): Promise<RgTool | undefined> {
	const out = await versionAndHelp(run, path);
	if (!out || !/^ripgrep \d/.test(out[0])) return undefined;
	const needed = [
		"--null",
		"--sort",
		"--no-ignore-global",
		"--no-config",
		"--no-mmap",
		"--max-columns-preview",
	];
	needed.push("--no-context-separator", "--regex-size-limit", "--dfa-size-limit");
	if (!needed.every((flag) => out[1].includes(flag))) return undefined;
	return { path, version: out[0].split("\n")[0] };
}

/** A usable fd at `path` (≥ 8.3, which marks directories with a trailing "/"), or undefined. */
export async function probeFd(run: ArgvRunner, path: string): Promise<FdTool | undefined> {
	const out = await versionAndHelp(run, path);
	// "fd" on some systems is another program (e.g. a file manager): insist on fd's banner.
	if (!out || !/^(fd|fdfind) \d/.test(out[0])) return undefined;
	const v = parseVersion(out[0]);
	if (!v || v[0] < 8 || (v[0] === 8 && v[1] < 3)) return undefined;
	const needed = ["--glob", "--hidden", "--exclude", "--full-path", "--print0", "--case-sensitive"];
	if (!needed.every((flag) => out[1].includes(flag))) return undefined;
	return {
		path,
		version: out[0],
		noGlobalIgnoreFile: out[1].includes("--no-global-ignore-file"),
		noRequireGit: out[1].includes("--no-require-git"),
	};
}

/** Find and probe rg and fd (or Debian's fdfind) with `locate` (name → executable path). */
export async function detectNativeTools(
	run: ArgvRunner,
	locate: (name: string) => Promise<string | undefined>,
): Promise<NativeTools> {
	const rgPath = await locate("rg");
	const rg = rgPath ? await probeRg(run, rgPath) : undefined;
	let fd: FdTool | undefined;
	for (const name of ["fd", "fdfind"]) {
		const p = await locate(name);
		fd = p ? await probeFd(run, p) : undefined;
		if (fd) break;
	}
	return { rg, fd };
}
