/**
 * ProcessOps.spawn on this machine (local, and bwrap with its argv in front): the program leads
 * its own process group (detached), so kill() takes its children with it.
 */
import type { Readable, Writable } from "node:stream";
import { killChildGroup } from "../group-kill.js";
import { type Spawner, startChild } from "../spawn/spawner.js";
import type { ProcessExit, SpawnedProcess, SpawnRequest } from "../types.js";

/** After exit, how long to wait for pipes that a surviving grandchild may hold open. */
const PIPE_DRAIN_MS = 100;

type Refable = { ref?: () => void; unref?: () => void };

/** Through `spawner` (posix_spawn) when given, else Node's spawn. */
/** `inheritFds`: descriptors of this process the program gets next (after fd3 and fd4 with fdPipes). */
export function spawnLocal(
	req: SpawnRequest & { inheritFds?: readonly number[] },
	spawner?: Spawner,
): SpawnedProcess {
	const child = startChild(spawner, req.argv[0], req.argv.slice(1), {
		cwd: req.cwd,
		env: req.env ?? process.env,
		detached: true,
		stdio: [
			req.nullStdin ? "ignore" : "pipe",
			"pipe",
			"pipe",
			...(req.fdPipes ? (["pipe", "pipe"] as const) : []),
			...(req.inheritFds ?? []),
		],
	});
	const stdio = child.stdio as unknown as (Readable | Writable | null)[];
	for (const s of stdio) s?.on("error", () => {}); // EPIPE etc.: the exit reports the death
	const exited = new Promise<ProcessExit>((resolve) => {
		let exit: ProcessExit | undefined;
		let done = false;
		const finish = () => {
			if (done || !exit) return;
			done = true;
			for (const s of stdio) s?.destroy();
			resolve(exit);
		};
		child.on("error", (error) => {
			exit = { code: null, signal: null, error };
			finish();
		});
		child.on("exit", (code, signal) => {
			exit = { code, signal };
			setTimeout(finish, PIPE_DRAIN_MS).unref();
		});
		child.on("close", finish);
	});
	return {
		pid: child.pid,
		...(stdio[0] ? { stdin: stdio[0] as Writable } : {}),
		stdout: stdio[1] as Readable,
		stderr: stdio[2] as Readable,
		...(req.fdPipes ? { fd3: stdio[3] as Writable, fd4: stdio[4] as Readable } : {}),
		exited,
		kill() {
			killChildGroup(child);
			// Not reaped yet, the pid is still the child's own (a group kill refused above included).
			if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
		},
		setRef(ref) {
			for (const h of [child, ...stdio] as (Refable | null)[]) {
				if (ref) h?.ref?.();
				else h?.unref?.();
			}
		},
	};
}
