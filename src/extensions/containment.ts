/**
 * What keeps a draft's reads inside its root. Node's permission model checks the
 * path a draft names, then the kernel follows links: a link inside the root to a file outside
 * would be read. Two ways to close that:
 *  - bwrap (when it runs here): the child runs in a sandbox where the root is bound read-only and
 *    nothing else of the host exists but what node needs (/usr and the top-level links into it,
 *    ld.so.cache, the node binary, the child entry, the temp dir). A link that leaves the root
 *    points at nothing.
 *  - otherwise: the root is walked before the child starts, and any symbolic link whose target is
 *    outside the root (or dangling, or a loop) refuses the run, naming the link.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { lstat, readdir, readlink, realpath } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { KeelError } from "../boundary/errors.js";

export type SmokeSandbox = "auto" | "bwrap" | "none";

/** Entries walked at most when checking a root without bwrap. */
export const MAX_CHECKED_ENTRIES = 200_000;

const SYSTEM_DIRS = ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin"];

function inside(parent: string, child: string): boolean {
	const rel = relative(parent, child);
	return rel === "" || (!rel.startsWith("..") && !rel.startsWith("/"));
}

/** The system part: /usr and the top-level links into it, the loader's cache, no capabilities. */
async function systemArgs(): Promise<string[]> {
	const args = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"];
	for (const p of SYSTEM_DIRS) {
		const st = await lstat(p).catch(() => undefined);
		if (st?.isSymbolicLink()) args.push("--symlink", await readlink(p), p);
		else if (st?.isDirectory()) args.push("--ro-bind", p, p);
	}
	args.push("--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--proc", "/proc", "--dev", "/dev");
	return args;
}

/** bwrap's options for a child that may read `root` and `entry` and write `tempDir`. */
async function bwrapArgs(root: string, entry: string, tempDir: string): Promise<string[]> {
	const args = await systemArgs();
	const node = await realpath(process.execPath);
	if (!SYSTEM_DIRS.some((d) => inside(d, node))) args.push("--ro-bind", dirname(node), dirname(node));
	args.push(
		"--ro-bind",
		root,
		root,
		"--ro-bind",
		entry,
		entry,
		"--bind",
		tempDir,
		tempDir,
		"--chdir",
		tempDir,
	);
	return args;
}

/** Whether bwrap can start a sandbox here (one `true` in the same kind of sandbox). */
async function bwrapWorks(bwrap: string): Promise<boolean> {
	if (!existsSync("/usr/bin/true")) return false;
	const r = spawnSync(bwrap, [...(await systemArgs()), "--", "/usr/bin/true"], {
		stdio: "ignore",
		timeout: 10_000,
	});
	return r.status === 0;
}

/** Every symbolic link below `root` that leads outside it; throws PATH_OUTSIDE_ROOTS naming the first. */
export async function refuseLinksLeaving(root: string): Promise<void> {
	let seen = 0;
	let level = [root];
	while (level.length > 0) {
		const next: string[] = [];
		for (const dir of level) {
			const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
			for (const e of entries) {
				if (++seen > MAX_CHECKED_ENTRIES) {
					throw new KeelError(
						"INVALID_ARGS",
						`The draft's root has more than ${MAX_CHECKED_ENTRIES} entries to check for links leaving it; install bubblewrap (the check is not needed inside it) or use a smaller root.`,
						{},
					);
				}
				const path = join(dir, e.name);
				if (e.isDirectory()) next.push(path);
				else if (e.isSymbolicLink()) {
					const target = await realpath(path).catch(() => undefined);
					if (target === undefined || !inside(root, target)) {
						throw new KeelError(
							"PATH_OUTSIDE_ROOTS",
							`${relative(root, path)} in the draft's root is a link that leads outside it (or nowhere); without bubblewrap the smoke test refuses to run a draft that could read through it. Remove the link or install bubblewrap.`,
							{ path },
						);
					}
				}
			}
		}
		level = next;
	}
}

export interface Containment {
	kind: "bwrap" | "checked";
	/** The argv that runs `argv` contained (bwrap in front), given the child's temp dir. */
	wrap(argv: string[], tempDir: string): Promise<string[]>;
}

/**
 * Decide how the child runs: "bwrap" requires it (BACKEND_UNAVAILABLE when it cannot start),
 * "none" never uses it, "auto" uses it when it starts. Without it, the root is checked first.
 */
export async function containmentFor(
	root: string,
	entry: string,
	mode: SmokeSandbox = "auto",
	bwrap = "bwrap",
): Promise<Containment> {
	const works = mode !== "none" && (await bwrapWorks(bwrap));
	if (mode === "bwrap" && !works) {
		throw new KeelError(
			"BACKEND_UNAVAILABLE",
			"bubblewrap cannot start a sandbox here; install it or use sandbox: auto.",
		);
	}
	if (works) {
		return {
			kind: "bwrap",
			wrap: async (argv, tempDir) => [bwrap, ...(await bwrapArgs(root, entry, tempDir)), "--", ...argv],
		};
	}
	await refuseLinksLeaving(root);
	return { kind: "checked", wrap: async (argv) => argv };
}
