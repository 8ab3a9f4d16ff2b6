/**
 * Run an argv on this machine in its own process group: output is handed on
 * as it arrives (stdout told from stderr), abort or timeout SIGKILLs the whole group. Commands on
 * `local` and everything `bwrap` runs go through here.
 */
import { watchStop } from "../boundary/timing.js";
import { killChildGroup } from "./group-kill.js";
import { type Spawner, startChild } from "./spawn/spawner.js";
import type { ExecResult } from "./types.js";

/** After the leader exits, how long to wait for pipes held open by background children. */
const PIPE_DRAIN_MS = 250;

export type OutputStream = "stdout" | "stderr";

export interface GroupRunRequest {
	argv: readonly string[];
	cwd?: string;
	env?: NodeJS.ProcessEnv;
	timeoutMs?: number;
	signal?: AbortSignal;
	/** Bytes for the process's stdin (closed after them); none: stdin is /dev/null. */
	stdin?: Uint8Array | NodeJS.ReadableStream;
	onData: (chunk: Buffer, stream: OutputStream) => void;
	/** Starts the program (posix_spawn); without one, Node's spawn. */
	spawner?: Spawner;
	/** Descriptors of this process the program gets as its descriptors 3, 4, ... */
	inheritFds?: readonly number[];
}

/** Rejects only when the program cannot be started (ENOENT, EACCES); everything else resolves. */
export function runInGroup(req: GroupRunRequest): Promise<ExecResult> {
	return new Promise((resolve, reject) => {
		if (req.signal?.aborted) {
			resolve({ exitCode: null, signal: null, timedOut: false, aborted: true });
			return;
		}
		const child = startChild(req.spawner, req.argv[0], req.argv.slice(1), {
			cwd: req.cwd,
			detached: true,
			env: req.env ?? process.env,
			stdio: [req.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe", ...(req.inheritFds ?? [])],
		});
		let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
		let settled = false;
		let drainTimer: NodeJS.Timeout | undefined;

		const stops = watchStop(req.signal, req.timeoutMs, () => killChildGroup(child));
		const stopped = () => stops.aborted || stops.timedOut;

		const cleanup = () => {
			stops.dispose();
			if (drainTimer) clearTimeout(drainTimer);
		};
		const finish = () => {
			if (settled || !exit) return;
			settled = true;
			cleanup();
			if (stopped()) killChildGroup(child);
			child.stdout?.destroy();
			child.stderr?.destroy();
			resolve({ exitCode: exit.code, signal: exit.signal, timedOut: stops.timedOut, aborted: stops.aborted });
		};

		if (child.stdin && req.stdin !== undefined) {
			// The program may exit without reading everything (EPIPE): its exit status tells.
			child.stdin.on("error", () => {});
			if (req.stdin instanceof Uint8Array) child.stdin.end(req.stdin);
			else req.stdin.pipe(child.stdin);
		}
		child.stdout?.on("data", (c: Buffer) => req.onData(c, "stdout"));
		child.stderr?.on("data", (c: Buffer) => req.onData(c, "stderr"));
		child.on("error", (err) => {
			if (settled) return;
			settled = true;
			cleanup();
			reject(err);
		});
		child.on("exit", (code, signal) => {
			exit = { code, signal };
			// Background children may hold the pipes; do not wait for them forever.
			drainTimer = setTimeout(finish, stopped() ? 0 : PIPE_DRAIN_MS);
		});
		child.on("close", finish);
	});
}
