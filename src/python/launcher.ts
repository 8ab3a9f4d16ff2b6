/**
 * Where and how the worker starts: through the session's backend.
 *
 *  - local: the interpreter is found on this machine's file system; the worker gets fds 3 and 4.
 *  - bwrap (fdPipes): the same fds, inside the sandbox, so Python's own writes obey it.
 *  - ssh, exec (stdio only): mux.py runs on the target and relays fds 3 and 4 and the output over
 *    the one process's stdio (mux-process.ts); the worker runs there, on the remote interpreter.
 *
 * The worker's source is worker_protocol.py and worker.py joined, given as `-c` everywhere (the
 * package's files are not bound into the sandbox nor copied to a remote host). Off `local`, the
 * interpreter is looked up with one command on the backend (which also checks that it is
 * Python >= 3.8).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { spawnLocal } from "../backend/local/spawn.js";
import { hostProgram, readHostFile } from "../backend/remote/host-programs.js";
import { shq } from "../backend/shell-quote.js";
import type { Backend, ProcessOps, SpawnedProcess } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import { findInterpreter } from "./interpreter.js";
import { muxedWorker } from "./mux-process.js";

/** Resolved next to this module, so they are found from src/python and from dist/python alike. */
const pythonFile = (name: string) => fileURLToPath(new URL(`../../src/python/${name}`, import.meta.url));
/** The worker's source, in this order: the protocol's functions, then the worker using them. */
const WORKER_PARTS = ["worker_protocol.py", "worker.py"].map(pythonFile);
const MUX_SCRIPT = pythonFile("mux.py");

export interface LaunchOptions {
	interpreter?: string;
	pythonFlags?: string[];
	/** On this machine: the worker's environment. Remote: variables added to the host's. */
	env?: NodeJS.ProcessEnv;
	memoryLimitBytes?: number;
}

export interface WorkerLauncher {
	/** The interpreter, found (and cached) without starting any code. */
	interpreter(cwd: string): Promise<string>;
	/** Start a worker in `cwd`; only after interpreter() resolved. */
	start(cwd: string): SpawnedProcess;
}

/**
 * Candidates tried in order (src/backend/remote/host/find_python.sh): the configured one alone,
 * else /usr/bin/python3 and python3 on PATH.
 */
const findScript = hostProgram(() => readHostFile("find_python.sh"));

async function findOnBackend(backend: Backend, configured: string | undefined, cwd: string): Promise<string> {
	const candidates = configured ? [configured] : ["/usr/bin/python3", "python3"];
	const out: Buffer[] = [];
	const r = await backend.exec.run({
		command: `set -- ${candidates.map(shq).join(" ")}\n${findScript()}`,
		cwd,
		timeoutMs: 30_000,
		onData: (c) => out.push(c),
	});
	const found = Buffer.concat(out).toString("utf8").trim().split("\n").pop() ?? "";
	if (r.exitCode === 0 && found.startsWith("/")) return found;
	throw new KeelError(
		"BACKEND_UNAVAILABLE",
		configured
			? `python is not available on the ${backend.kind} backend: the configured interpreter ${JSON.stringify(configured)} is not Python >= 3.8 there.`
			: `python is not available on the ${backend.kind} backend: it has no python3 (tried /usr/bin/python3 and python3 on its PATH); install Python 3.8 or newer there, or use the local backend.`,
	);
}

export function createLauncher(backend: Backend | undefined, opts: LaunchOptions): WorkerLauncher {
	const flags = opts.pythonFlags ?? [];
	const memory = String(Math.max(0, Math.floor(opts.memoryLimitBytes ?? 0)));
	let path: string | undefined;
	// Read once, when the first worker starts.
	let workerSource: string | undefined;
	let muxSource: string | undefined;
	const worker = () => (workerSource ??= WORKER_PARTS.map((f) => readFileSync(f, "utf8")).join("\n\n"));
	const mux = () => (muxSource ??= readFileSync(MUX_SCRIPT, "utf8"));
	const local = !backend || backend.spawnsHere === true;
	const processes: ProcessOps | undefined = backend?.process;

	const lookup = async (cwd: string): Promise<string> => {
		if (local) return findInterpreter(opts.env ?? process.env, opts.interpreter);
		if (!processes) {
			throw new KeelError(
				"BACKEND_UNAVAILABLE",
				`python is not supported on the ${backend!.kind} backend (it cannot keep a process running); use bash to run python3 there.`,
			);
		}
		await processes.ready();
		// KEEL_PYTHON names a path on this machine: it means something to bwrap, not to a remote host.
		const configured =
			opts.interpreter ?? (processes.fdPipes ? (opts.env ?? process.env).KEEL_PYTHON : undefined);
		return findOnBackend(backend!, configured, cwd);
	};

	return {
		async interpreter(cwd) {
			// Only a success is kept: a host may get python3 later.
			path ??= await lookup(cwd);
			return path;
		},
		start(cwd) {
			if (!path) throw new Error("createLauncher: interpreter() first");
			if (local || !processes) {
				return (processes?.spawn ?? spawnLocal)({
					argv: [path, ...flags, "-c", worker(), memory],
					cwd,
					env: opts.env ?? process.env,
					fdPipes: true,
					nullStdin: true,
				});
			}
			if (processes.fdPipes) {
				return processes.spawn({
					argv: [path, ...flags, "-c", worker(), memory],
					cwd,
					env: opts.env,
					fdPipes: true,
					nullStdin: true,
				});
			}
			const relay = processes.spawn({ argv: [path, "-c", mux(), memory, ...flags], cwd, env: opts.env });
			return muxedWorker(relay, worker());
		},
	};
}
