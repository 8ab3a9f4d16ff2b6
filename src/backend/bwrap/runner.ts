/**
 * Runs argv inside one configured bubblewrap sandbox. The sandbox options are built and probed on
 * first use and then cached by this object (never module-wide); a failed probe is remembered too,
 * so every later call fails fast with the same BACKEND_UNAVAILABLE.
 *
 * Before every command the protected set is found again in the roots (protect-cache.ts keeps the
 * answer while nothing it read changed) and mounted read-only (protect.ts); after it, protected
 * paths the command created are moved aside and the output says so. Commands without stdin run in
 * a long-lived sandbox (server-pool.ts) built with the same options. Every start is built from
 * descriptors opened through the path guard's pinned roots (launch.ts).
 */
import { homedir } from "node:os";
import { posix } from "node:path";
import { backendFact } from "../../boundary/backend-facts.js";
import { defaultStateDir } from "../../safety/state-dir.js";
import { DirPins } from "../local/pin.js";
import { type GroupRunRequest, runInGroup } from "../run-group.js";
import type { ExecResult, LiveProcess } from "../types.js";
import { sandboxEnv } from "./env.js";
import { KeyringFilter } from "./keyring-filter.js";
import { type LaunchPlan, launchPlan, visibleMasks } from "./launch.js";
import { probeBwrap } from "./probe.js";
import { type ProtectedScan, protectBinds } from "./protect.js";
import { moveAsideCreated } from "./protect-aside.js";
import { ProtectedScanCache, type ProtectedScanCacheOptions } from "./protect-cache.js";
import { buildSandbox, type Sandbox, type SandboxOptions } from "./sandbox.js";
import { SERVER_PYTHON } from "./server.js";
import { ServerPool } from "./server-pool.js";

export interface SandboxRunnerOptions extends SandboxOptions {
	/** How the protected-set scan is kept (protect-cache.ts; tests lower its limits). */
	scanCache?: ProtectedScanCacheOptions;
	/** The bwrap program (default: "bwrap", looked up on PATH). */
	bwrap?: string;
	/** Where sandboxed commands' variables come from (default: process.env); only some pass (env.ts). */
	env?: NodeJS.ProcessEnv;
	/** More variables to pass in by name (the user's explicit choice: `--env NAME`). */
	passEnv?: string[];
	/** Leave the protected set writable inside the sandbox. */
	allowProtected?: boolean;
	/** More protected paths (absolute, or relative to the first root). */
	protectedPaths?: string[];
	/** The home directory whose configuration is protected when it lies in a root (default: the OS home). */
	home?: string;
	/**
	 * Directories never visible inside the sandbox (an empty tmpfs covers them where a bind would
	 * show them). keel's state directory ($XDG_STATE_HOME/keel) always is.
	 */
	hidden?: readonly string[];
}

export interface SandboxRunRequest extends Omit<GroupRunRequest, "argv" | "cwd" | "env"> {
	/** Directory inside the sandbox (must be within a bind). */
	cwd: string;
	/** Replaces the configured source of variables for this call (still filtered). */
	env?: NodeJS.ProcessEnv;
}

export interface TerminalStartRequest {
	/** Directory inside the sandbox (must be within a bind). */
	cwd: string;
	/** Replaces the configured source of variables for this call (still filtered). */
	env?: NodeJS.ProcessEnv;
	cols: number;
	rows: number;
	onData: (chunk: Buffer) => void;
}

export interface SandboxRunner {
	/** Build and probe the sandbox; throws BACKEND_UNAVAILABLE (with the fix) when bwrap cannot run. */
	ready(): Promise<Sandbox>;
	run(argv: readonly string[], req: SandboxRunRequest): Promise<ExecResult>;
	/**
	 * bwrap's argv, environment and descriptors for running `argv` in `cwd`, the descriptors given to
	 * the child from `firstFd` on; close() once it is started. Only after ready() resolved.
	 */
	wrap(
		argv: readonly string[],
		cwd: string,
		env: NodeJS.ProcessEnv | undefined,
		firstFd: number,
	): { argv: string[]; env: NodeJS.ProcessEnv; inheritFds: readonly number[]; close(): void };
	/**
	 * Starts `argv` in a pseudo-terminal made inside a sandbox of its own (by its command server:
	 * server.ts); UNSUPPORTED when that server cannot run here.
	 */
	startInTerminal(argv: readonly string[], req: TerminalStartRequest): Promise<LiveProcess>;
	/** Hide these directories from every sandbox started from now on (keel's own state). */
	hide(paths: readonly string[]): void;
	/** After a wrapped (spawned) program ends: move aside protected paths it created. */
	recheck(): Promise<string[]>;
	/** Kills the long-lived sandboxes and frees the kept scan's watches. */
	close(): void;
	/** The long-lived sandboxes (server-pool.ts), for tests and the bench. */
	readonly servers: ServerPool;
	/** The kept protected-set scan (protect-cache.ts), for tests and the bench. */
	readonly scans: ProtectedScanCache;
}

/** `shared`: the path guard's pinned roots (the backend's files); without them the runner pins its own. */
export function createSandboxRunner(opts: SandboxRunnerOptions, shared?: DirPins): SandboxRunner {
	const pins = shared ?? new DirPins();
	const bwrap = opts.bwrap ?? "bwrap";
	const keyring = new KeyringFilter();
	const hidden = new Set([defaultStateDir(), ...(opts.hidden ?? [])].map((p) => posix.resolve(p)));
	let prepared: Promise<Sandbox> | undefined;
	let built: Sandbox | undefined;
	/** The latest scan, which wrap() mounts (refreshed by every run and recheck). */
	let lastScan: ProtectedScan | undefined;
	const scans = new ProtectedScanCache(opts.scanCache);
	const servers = new ServerPool();

	const scan = async (sandbox: Sandbox): Promise<ProtectedScan | undefined> => {
		if (opts.allowProtected) return undefined;
		const extra = (opts.protectedPaths ?? []).map((p) => posix.resolve(sandbox.roots[0], p));
		lastScan = await scans.scan({ roots: sandbox.roots, home: opts.home ?? homedir(), extra, pins });
		return lastScan;
	};
	const ready = () => {
		prepared ??= buildSandbox(opts).then(async (sandbox) => {
			// Held from here on (the guard's own, when it pinned them first): every start opens from them.
			pins.pin(sandbox.binds.filter((b) => b.dir).map((b) => b.source));
			await probeBwrap(bwrap, plan(sandbox, undefined));
			await scan(sandbox);
			built = sandbox;
			return sandbox;
		});
		return prepared;
	};
	const plan = (sandbox: Sandbox, protection: ProtectedScan | undefined): LaunchPlan =>
		launchPlan({
			sandbox,
			protect: protection ? protectBinds(protection, sandbox.roots) : [],
			masks: visibleMasks(hidden, sandbox),
			pins,
			keyring,
		});
	const wrapIn = (
		sandbox: Sandbox,
		protection: ProtectedScan | undefined,
		argv: readonly string[],
		cwd: string,
		env: NodeJS.ProcessEnv | undefined,
		firstFd: number,
	) => {
		const launch = plan(sandbox, protection);
		const opened = launch.open();
		return {
			argv: [bwrap, ...launch.options(firstFd), "--chdir", cwd, "--", ...argv],
			env: sandboxEnv(env ?? opts.env ?? process.env, sandbox.bound, opts.passEnv),
			inheritFds: opened.fds,
			close: opened.close,
		};
	};
	const afterwards = async (sandbox: Sandbox, before: ProtectedScan | undefined) => {
		if (!before) return [];
		const after = await scan(sandbox);
		// The kept scan itself: every path it read, absent ones included, is as it was, so nothing
		// protected appeared and there is nothing to look up again.
		if (after === before) return [];
		return after ? moveAsideCreated(before, after, pins) : [];
	};
	return {
		ready,
		async run(argv, req) {
			const sandbox = await ready();
			const before = await scan(sandbox);
			const env = sandboxEnv(req.env ?? opts.env ?? process.env, sandbox.bound, opts.passEnv);
			// Without stdin, through a long-lived sandbox built from the same plan.
			const served =
				req.stdin === undefined && servers.usable
					? await servers.run(bwrap, plan(sandbox, before), sandbox.bound, { ...req, argv, env })
					: undefined;
			let result = served;
			if (!result) {
				const wrapped = wrapIn(sandbox, before, argv, req.cwd, req.env, 3);
				let running: Promise<ExecResult>;
				try {
					running = runInGroup({ ...req, ...wrapped }); // started synchronously
				} finally {
					wrapped.close();
				}
				result = await running;
			}
			for (const note of await afterwards(sandbox, before)) req.onData(Buffer.from(`\n${note}\n`), "stderr");
			return result;
		},
		async startInTerminal(argv, req) {
			const sandbox = await ready();
			const before = await scan(sandbox);
			const server = await servers.own(bwrap, plan(sandbox, before));
			if (!server) throw backendFact("terminal-needs-python", { tool: SERVER_PYTHON });
			const env = sandboxEnv(req.env ?? opts.env ?? process.env, sandbox.bound, opts.passEnv);
			return server.startTerminal({ ...req, argv, env: { ...env, TERM: "xterm-256color" } });
		},
		wrap(argv, cwd, env, firstFd) {
			if (!built) throw new Error("the bwrap sandbox is not ready: call ready() first");
			return wrapIn(built, lastScan, argv, cwd, env, firstFd);
		},
		hide(paths) {
			for (const p of paths) hidden.add(posix.resolve(p));
		},
		async recheck() {
			if (!built) return [];
			return afterwards(built, lastScan);
		},
		close() {
			servers.close();
			scans.close();
			keyring.close();
			if (!shared) pins.close();
		},
		servers,
		scans,
	};
}
