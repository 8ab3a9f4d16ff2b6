/**
 * Starts the programs a backend runs on this machine (commands, rg and fd, Python workers, bwrap)
 * with posix_spawn where koffi loads (libc-spawn.ts), so a start costs the same whatever memory
 * this process holds; Node's spawn (fork) otherwise. One per backend: it reaps its own children on
 * SIGCHLD with waitpid(pid), never waitpid(-1), so Node's own children stay Node's.
 *
 * koffi is loaded on the second start, once the first child runs: a one-shot CLI call never pays
 * its 13-19 ms, and a session pays it once while waiting on a child anyway.
 */
import { spawn as forkSpawn } from "node:child_process";
import { accessSync, closeSync, constants, statSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { join } from "node:path";
import { isMainThread } from "node:worker_threads";
import { type ChildLike, type ChildOwner, SpawnedChild } from "./child.js";
import { type ChildFd, type LibcSpawn, lazyLibcSpawn } from "./libc-spawn.js";

/** A number: that descriptor of this process, given to the child as its descriptor at this index. */
export type StdioChoice = "pipe" | "ignore" | number;

export interface StartOptions {
	cwd?: string;
	env?: NodeJS.ProcessEnv;
	/** The child leads a new session and process group (Node's `detached`). */
	detached?: boolean;
	/** Index i is the child's descriptor i. */
	stdio: readonly StdioChoice[];
}

export interface SpawnerOptions {
	/** "auto" (default): posix_spawn from the second start on; "fork": always Node's spawn. */
	engine?: "auto" | "posix_spawn" | "fork";
}

/** A safety net under SIGCHLD, and what keeps the event loop alive while a ref'd child runs. */
const REAP_POLL_MS = 1000;

const errnoNames = new Map<number, string>(Object.entries(osConstants.errno).map(([k, v]) => [v, k]));

export class Spawner implements ChildOwner {
	private readonly load = lazyLibcSpawn();
	private libc: LibcSpawn | null | undefined;
	private starts = 0;
	private readonly live = new Map<number, SpawnedChild>();
	private poll: NodeJS.Timeout | undefined;
	private readonly onChildSignal = () => this.reapAll();

	constructor(private readonly opts: SpawnerOptions = {}) {
		if (opts.engine === "posix_spawn" && isMainThread) this.libc = this.load();
	}

	/** Whether starts go through posix_spawn now (false: Node's spawn). */
	get usesPosixSpawn(): boolean {
		return !!this.libc;
	}

	start(file: string, args: readonly string[], opts: StartOptions): ChildLike {
		const libc = this.binding();
		// posix_spawn's dup2s run in order: a given descriptor numbered like an earlier target would
		// be overwritten before it is used. libuv moves such descriptors out of the way first.
		const clash = opts.stdio.some((c) => typeof c === "number" && c < opts.stdio.length);
		if (!libc || clash) return forkStart(file, args, opts);
		const argv = [file, ...args];
		const envp = Object.entries(opts.env ?? process.env)
			.filter((e): e is [string, string] => e[1] !== undefined)
			.map(([k, v]) => `${k}=${v}`);
		for (const s of [...argv, ...envp, opts.cwd ?? ""]) {
			// Node refuses these too: a C string would end at the NUL and run something else.
			if (s.includes("\0")) throw new TypeError(`spawn: an argument holds a NUL byte: ${JSON.stringify(s)}`);
		}
		const child = new SpawnedChild(this);
		const parentEnds: (number | null)[] = [];
		const childEnds: number[] = [];
		const fds: ChildFd[] = [];
		const fail = (code: string, errno: number) => {
			for (const fd of childEnds) closeSync(fd);
			child.failed(spawnError(file, argv, code, errno), parentEnds);
			return child;
		};
		for (const [target, choice] of opts.stdio.entries()) {
			if (typeof choice === "number") {
				parentEnds.push(null);
				fds.push({ target, fd: choice });
				continue;
			}
			if (choice === "ignore") {
				parentEnds.push(null);
				fds.push({ target, devNull: target === 0 ? "r" : "rw" });
				continue;
			}
			const pair = libc.socketPair();
			if (!Array.isArray(pair))
				return fail(pair.errnoName, osConstants.errno[pair.errnoName as "EMFILE"] ?? 0);
			parentEnds.push(pair[0]);
			childEnds.push(pair[1]);
			fds.push({ target, fd: pair[1] });
		}
		const path = resolveProgram(file, opts.env ?? process.env);
		if (path === undefined) return fail("ENOENT", osConstants.errno.ENOENT);
		this.watch();
		const started = libc.spawn({ path, argv, envp, cwd: opts.cwd, setsid: opts.detached ?? false, fds });
		if ("errno" in started) {
			this.unwatchIfIdle();
			return fail(errnoNames.get(started.errno) ?? `errno ${started.errno}`, started.errno);
		}
		for (const fd of childEnds) closeSync(fd);
		child.attach(started.pid, parentEnds);
		this.live.set(started.pid, child);
		this.refChanged();
		return child;
	}

	refChanged(): void {
		if (!this.poll) return;
		const wanted = [...this.live.values()].some((c) => c.wantsRef);
		if (wanted) this.poll.ref();
		else this.poll.unref();
	}

	private binding(): LibcSpawn | null {
		// A worker thread is never sent SIGCHLD (only the main thread's listeners hear signals).
		if (this.libc !== undefined || this.opts.engine === "fork" || !isMainThread) return this.libc ?? null;
		if (++this.starts === 2) this.libc = this.load();
		return this.libc ?? null;
	}

	private watch(): void {
		if (this.poll) return;
		// Balanced in unwatchIfIdle: each spawner with live children adds one SIGCHLD listener.
		const max = process.getMaxListeners();
		if (max > 0) process.setMaxListeners(max + 1);
		process.on("SIGCHLD", this.onChildSignal);
		this.poll = setInterval(this.onChildSignal, REAP_POLL_MS);
	}

	private unwatchIfIdle(): void {
		if (!this.poll || this.live.size > 0) return;
		clearInterval(this.poll);
		this.poll = undefined;
		process.off("SIGCHLD", this.onChildSignal);
		const max = process.getMaxListeners();
		if (max > 0) process.setMaxListeners(max - 1);
	}

	private reapAll(): void {
		const libc = this.libc;
		if (!libc) return;
		for (const [pid, child] of this.live) {
			const end = libc.reap(pid);
			if (!end) continue;
			this.live.delete(pid);
			child.exited(end.code, end.signal);
		}
		this.unwatchIfIdle();
		this.refChanged();
	}
}

/** Node's own spawn: a fork of this process. */
function forkStart(file: string, args: readonly string[], opts: StartOptions): ChildLike {
	return forkSpawn(file, [...args], {
		cwd: opts.cwd,
		env: opts.env ?? process.env,
		detached: opts.detached ?? false,
		stdio: [...opts.stdio],
	});
}

/** Through `spawner` when given, else Node's spawn. */
export function startChild(
	spawner: Spawner | undefined,
	file: string,
	args: readonly string[],
	opts: StartOptions,
): ChildLike {
	return spawner ? spawner.start(file, args, opts) : forkStart(file, args, opts);
}

/** Like execvp: a name without a slash is looked up in the child's PATH (default /bin:/usr/bin). */
function resolveProgram(file: string, env: NodeJS.ProcessEnv): string | undefined {
	if (file.includes("/")) return file;
	for (const dir of (env.PATH ?? "/bin:/usr/bin").split(":")) {
		const candidate = join(dir === "" ? "." : dir, file);
		try {
			accessSync(candidate, constants.X_OK);
			if (statSync(candidate).isFile()) return candidate;
		} catch {
			// not here
		}
	}
	return undefined;
}

/** The error Node's spawn emits: `spawn FILE CODE`, with errno, code, syscall, path, spawnargs. */
function spawnError(file: string, argv: readonly string[], code: string, errno: number): Error {
	return Object.assign(new Error(`spawn ${file} ${code}`), {
		errno: -errno,
		code,
		syscall: `spawn ${file}`,
		path: file,
		spawnargs: argv.slice(1),
	});
}
