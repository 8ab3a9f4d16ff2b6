/**
 * The search engines' transport on this machine: an ArgvRunner over child_process.spawn, and
 * detection of rg / fd / fdfind on PATH (done once per created object, never module-wide).
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { type Spawner, startChild } from "../spawn/spawner.js";
import { type ArgvRunner, detectNativeTools, type NativeTools } from "./native.js";

/** Spawns argv directly (no shell) through Node's spawn; abort kills the process with SIGKILL. */
export const localRunner: ArgvRunner = (argv, opts) => runArgv(undefined, argv, opts);

/** localRunner, started through `spawner` (posix_spawn) when given. */
export function spawnerRunner(spawner: Spawner): ArgvRunner {
	return (argv, opts) => runArgv(spawner, argv, opts);
}

function runArgv(
	spawner: Spawner | undefined,
	...[argv, opts]: Parameters<ArgvRunner>
): ReturnType<ArgvRunner> {
	return new Promise((resolve, reject) => {
		if (opts.signal?.aborted) {
			resolve({ exitCode: null });
			return;
		}
		const child = startChild(spawner, argv[0], argv.slice(1), {
			cwd: opts.cwd,
			stdio: ["ignore", "pipe", "pipe"],
		});
		const kill = () => child.kill("SIGKILL");
		opts.signal?.addEventListener("abort", kill, { once: true });
		child.stdout?.on("data", (c: Buffer) => opts.onStdout(c));
		child.stderr?.on("data", (c: Buffer) => opts.onStderr?.(c));
		let settled = false;
		const settle = (fn: () => void) => {
			if (settled) return;
			settled = true;
			opts.signal?.removeEventListener("abort", kill);
			fn();
		};
		child.on("error", (e) => settle(() => reject(e)));
		child.on("close", (code) => settle(() => resolve({ exitCode: code })));
	});
}

/** The executable called `name` in the first PATH directory holding one, like `which`. */
export async function findOnPath(
	name: string,
	pathEnv = process.env.PATH ?? "",
): Promise<string | undefined> {
	for (const dir of pathEnv.split(delimiter)) {
		if (dir === "") continue;
		const candidate = join(dir, name);
		try {
			if (!(await stat(candidate)).isFile()) continue;
			await access(candidate, constants.X_OK);
			return candidate;
		} catch {
			// not here; keep looking
		}
	}
	return undefined;
}

export interface LocalTools {
	readonly run: ArgvRunner;
	/** rg and fd found on PATH and probed; computed on first call, then cached by this object. */
	detect(): Promise<NativeTools>;
}

export function createLocalTools(opts: { pathEnv?: string; spawner?: Spawner } = {}): LocalTools {
	let cached: Promise<NativeTools> | undefined;
	const run = opts.spawner ? spawnerRunner(opts.spawner) : localRunner;
	return {
		run,
		detect() {
			cached ??= detectNativeTools(run, (name) => findOnPath(name, opts.pathEnv));
			return cached;
		},
	};
}
