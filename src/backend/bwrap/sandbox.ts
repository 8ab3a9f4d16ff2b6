/**
 * What a command sees inside bubblewrap: the system directories read-only, the configured roots
 * read-write at their own paths, everything else absent; a private /tmp, /proc and /dev; new user,
 * PID, IPC, UTS and (unless network is on) network namespaces; no capabilities.
 *
 * /etc is bound whole (resolv.conf, passwd, ld.so.cache, certificates, Debian's alternatives...:
 * an allowlist breaks tools in ways that are hard to diagnose) with its secrets masked: shadow
 * files, ssh host keys and /etc/ssl/private. Extra paths (e.g. /opt, a toolchain in $HOME) are
 * opt-in through `readOnly`.
 *
 * The host kernel's state stays out of reach, for root too: the user namespace is always new (the
 * sandbox holds no capability over the host), /proc/sys and /proc/sysrq-trigger are read-only,
 * /proc/keys is empty, /sys is not mounted, and the keyring calls fail (keyring-filter.ts).
 *
 * The roots, read-only paths and extra binds are not given to bwrap by name: `binds` lists them, and
 * every start opens them through the path guard's handles and passes the descriptors (launch.ts).
 */
import { lstat, readdir, readlink, realpath, stat } from "node:fs/promises";
import { posix } from "node:path";
import { KeelError } from "../../boundary/errors.js";

export interface BindSpec {
	source: string;
	/** Where it appears inside (default: the source path). */
	target?: string;
	readOnly?: boolean;
}

export interface SandboxOptions {
	/** Read-write binds at their own paths; the first is the workspace. */
	roots: string[];
	/** Read-only binds at their own paths. */
	readOnly?: string[];
	/** Any other binds (bound after the roots, so they may sit inside them). */
	extraBinds?: BindSpec[];
	/** Network access (default false: only a private loopback). */
	network?: boolean;
}

/** Host kernel interfaces under /proc that are writable by uid 0 whatever its namespace: read-only. */
const PROC_READ_ONLY = ["/proc/sys", "/proc/sysrq-trigger"];
/** Under /proc, what lists the host's keys (descriptions, owners): empty. */
const PROC_EMPTIED = ["/proc/keys", "/proc/key-users"];

/** Top-level system paths, bound read-only (or recreated as the symlinks they are on merged-/usr systems). */
const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];
const SECRET_FILES = [
	"/etc/shadow",
	"/etc/shadow-",
	"/etc/gshadow",
	"/etc/gshadow-",
	"/etc/security/opasswd",
];
const SECRET_DIRS = ["/etc/ssl/private"];

/** A bind of a canonical path, opened and passed by descriptor at every start. */
export interface Bind {
	source: string;
	target: string;
	readOnly: boolean;
	/** Whether the source is one of the roots or read-only paths (opened from the guard's handles). */
	dir: boolean;
}

export interface Sandbox {
	/** bwrap options before the binds: system paths, /proc, /dev, /tmp; the same for every command. */
	readonly args: readonly string[];
	/** The roots, read-only paths and extra binds, in mount order. */
	readonly binds: readonly Bind[];
	/** bwrap options after every mount: namespaces, capabilities. */
	readonly flags: readonly string[];
	/** Canonical paths bound into the sandbox (read-write and read-only), for env and cwd checks. */
	readonly bound: readonly string[];
	/** The canonical read-write roots (where the protected set is looked for). */
	readonly roots: readonly string[];
}

async function kindOf(path: string): Promise<"dir" | "file" | "symlink" | undefined> {
	try {
		const st = await lstat(path);
		if (st.isSymbolicLink()) return "symlink";
		if (st.isDirectory()) return "dir";
		return "file";
	} catch {
		return undefined;
	}
}

async function canonicalDir(path: string, what: string): Promise<string> {
	let canonical: string;
	try {
		canonical = await realpath(path);
	} catch {
		throw new KeelError(
			"NOT_FOUND",
			`${what} ${path} does not exist; create it or fix the bwrap configuration.`,
			{
				path,
			},
		);
	}
	if (!(await stat(canonical)).isDirectory()) {
		throw new KeelError("NOT_DIRECTORY", `${what} ${path} is not a directory.`, { path });
	}
	return canonical;
}

async function systemArgs(): Promise<string[]> {
	const args: string[] = [];
	for (const p of SYSTEM_PATHS) {
		const kind = await kindOf(p);
		if (kind === "symlink") args.push("--symlink", await readlink(p), p);
		else if (kind === "dir") args.push("--ro-bind", p, p);
	}
	// Masks go over the read-only /etc: /dev/null for files, an empty tmpfs for directories.
	const hostKeys = await readdir("/etc/ssh").then(
		(names) =>
			names.filter((n) => n.startsWith("ssh_host_") && !n.endsWith(".pub")).map((n) => `/etc/ssh/${n}`),
		() => [] as string[],
	);
	for (const f of [...SECRET_FILES, ...hostKeys]) {
		if ((await kindOf(f)) === "file") args.push("--ro-bind", "/dev/null", f);
	}
	for (const d of SECRET_DIRS) {
		if ((await kindOf(d)) === "dir") args.push("--tmpfs", d);
	}
	return args;
}

/** Builds the bwrap options once per backend (host lookups: merged /usr, which secrets exist, realpaths). */
export async function buildSandbox(opts: SandboxOptions): Promise<Sandbox> {
	if (opts.roots.length === 0)
		throw new KeelError("INVALID_ARGS", "bwrap needs at least one root (the workspace).");
	const roots = await Promise.all(opts.roots.map((r) => canonicalDir(r, "Root")));
	const readOnly = await Promise.all((opts.readOnly ?? []).map((r) => canonicalDir(r, "Read-only path")));
	const args = await systemArgs();
	args.push("--proc", "/proc");
	for (const p of PROC_READ_ONLY) if ((await kindOf(p)) !== undefined) args.push("--ro-bind", p, p);
	for (const p of PROC_EMPTIED) if ((await kindOf(p)) === "file") args.push("--ro-bind", "/dev/null", p);
	args.push("--dev", "/dev", "--tmpfs", "/tmp");
	if (opts.network) {
		// resolv.conf is often a link into /run (systemd-resolved).
		args.push("--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve");
	}
	// Roots after /tmp's tmpfs, so a root under /tmp is bound over it rather than hidden by it.
	const binds: Bind[] = [
		...readOnly.map((r) => ({ source: r, target: r, readOnly: true, dir: true })),
		...roots.map((r) => ({ source: r, target: r, readOnly: false, dir: true })),
	];
	const bound = [...roots, ...readOnly];
	for (const b of opts.extraBinds ?? []) {
		const source = await realpath(b.source).catch(() => {
			throw new KeelError("NOT_FOUND", `Bind source ${b.source} does not exist.`, { path: b.source });
		});
		const target = posix.resolve(b.target ?? source);
		binds.push({ source, target, readOnly: b.readOnly ?? false, dir: false });
		bound.push(target);
	}
	// A user namespace as root too: otherwise the sandbox is the host's uid 0 with the host's limits.
	const flags = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
	if (!opts.network) flags.push("--unshare-net");
	// --die-with-parent: if keel dies, the sandbox dies. --new-session: no TIOCSTI into a terminal.
	flags.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
	return { args, binds, flags, bound, roots };
}
