/**
 * The `bwrap` backend: files as on `local` (keel's path guard bounds them to the
 * roots), rg and fd inside the sandbox (bwrap/search-tools.ts), and every command inside a
 * bubblewrap sandbox (see bwrap/sandbox.ts for what a command can see). Commands go to a long-lived sandbox's command server (bwrap/server.ts):
 * abort, timeout and a command's end kill everything else in that sandbox, daemons too; a sandbox
 * per command remains for programs with stdin and the Python worker (bwrap's process group is
 * killed; with --die-with-parent and a PID namespace everything inside dies with it).
 */
import type { SandboxRunnerOptions } from "./bwrap/runner.js";
import { sandboxRunnerOnFirstUse } from "./bwrap/runner-on-first-use.js";
import { findShell } from "./local/exec.js";
import { createLocalFs, type LocalFsHooks } from "./local/fs.js";
import { searchOnFirstUse } from "./local/index.js";
import { startPiped } from "./local/live.js";
import { spawnLocal } from "./local/spawn.js";
import type { SearchEngineChoice } from "./search/index.js";
import { Spawner } from "./spawn/spawner.js";
import type { Backend, ExecOps, LiveProcess, ProcessOps } from "./types.js";

export { explainBwrapFailure } from "./bwrap/probe.js";
export type { BindSpec, SandboxOptions } from "./bwrap/sandbox.js";
export { createBwrapTransport } from "./bwrap/transport.js";

export interface BwrapBackendOptions extends SandboxRunnerOptions {
	searchEngine?: SearchEngineChoice;
	hooks?: LocalFsHooks;
}

export interface BwrapBackend extends Backend {
	/** Build and probe the sandbox now (otherwise the first command does): BACKEND_UNAVAILABLE names the fix. */
	ready(): Promise<void>;
	hideFromCommands(paths: readonly string[]): void;
}

export function createBwrapBackend(opts: BwrapBackendOptions): BwrapBackend {
	const fs = createLocalFs(opts.hooks);
	// The sandbox is built from the same pinned roots the path guard checks paths against.
	const runner = sandboxRunnerOnFirstUse(opts, fs.pins);
	const shell = findShell();
	// Starts what does not go through the sandbox's command server: stdin commands, the Python worker.
	const spawner = new Spawner();
	const exec: ExecOps = {
		run: (req) =>
			runner.run([shell, "-c", req.command], {
				cwd: req.cwd,
				env: req.env,
				timeoutMs: req.timeoutMs,
				signal: req.signal,
				onData: (chunk) => req.onData(chunk),
				spawner,
			}),
		// A process handle gets a sandbox of its own: its PID namespace holds whatever the command
		// starts, and killing bwrap (or keel dying: --die-with-parent) ends all of it. With pipes,
		// bwrap runs the command itself; in a terminal, the sandbox's command server makes the
		// pseudo-terminal inside (the sandbox is mounted from descriptors handed to bwrap, which a
		// terminal's child made outside could not be given).
		async start(req) {
			if (req.terminal) {
				const live = await runner.startInTerminal([shell, "-c", req.command], {
					cwd: req.cwd,
					env: req.env,
					...req.terminal,
					onData: req.onData,
				});
				void live.exited.then(() => runner.recheck()).catch(() => {});
				return live;
			}
			await runner.ready();
			const wrapped = runner.wrap([shell, "-c", req.command], req.cwd, req.env, 3);
			let live: LiveProcess;
			try {
				const program = {
					argv: wrapped.argv,
					cwd: req.cwd,
					env: wrapped.env,
					sweep: async () => {},
					inheritFds: wrapped.inheritFds,
				};
				live = startPiped(program, req, spawner);
			} finally {
				wrapped.close(); // the child has its copies
			}
			void live.exited.then(() => runner.recheck()).catch(() => {});
			return live;
		},
	};
	const processes: ProcessOps = {
		fdPipes: true, // bwrap hands inherited descriptors to the sandboxed program
		ready: async () => {
			await runner.ready();
		},
		spawn: (req) => {
			const wrapped = runner.wrap(req.argv, req.cwd, req.env, req.fdPipes ? 5 : 3);
			let child: ReturnType<typeof spawnLocal>;
			try {
				child = spawnLocal({ ...req, ...wrapped }, spawner);
			} finally {
				wrapped.close(); // the child has its copies
			}
			// A long-lived program (python's worker) is checked when it ends, not per call.
			void child.exited.then(() => runner.recheck()).catch(() => {});
			return child;
		},
	};
	return {
		kind: "bwrap",
		localFiles: true,
		fs,
		exec,
		process: processes,
		search: searchOnFirstUse(async () => {
			const [{ createLocalSearch }, { sandboxSearchTools }] = await Promise.all([
				import("./search/index.js"),
				import("./bwrap/search-tools.js"),
			]);
			return createLocalSearch({
				engine: opts.searchEngine ?? "auto",
				pins: fs.pins,
				tools: sandboxSearchTools(runner),
				pinNative: false,
			});
		}),
		ready: async () => {
			await runner.ready();
		},
		hideFromCommands: (paths) => runner.hide(paths),
		close: async () => {
			runner.close();
			await fs.close();
		},
	};
}
