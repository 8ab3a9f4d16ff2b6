/**
 * The sandbox runner (runner.ts), its code imported by the first command, search or ready() rather
 * than when keel starts: the runner, the command server, the protected-set scan and the probes are
 * most of the bwrap backend's code, and a process that never runs a sandboxed command never needs
 * them.
 *
 * It behaves as the runner it stands for: paths hidden before the runner exists are hidden by it
 * from its start (before any sandbox), a runner made after close() is closed at once (so no
 * sandbox can start), and wrap(), which needs a built sandbox, is only valid after ready().
 */
import type { DirPins } from "../local/pin.js";
import type { SandboxRunner, SandboxRunnerOptions } from "./runner.js";

export type LazySandboxRunner = Pick<
	SandboxRunner,
	"ready" | "run" | "startInTerminal" | "wrap" | "hide" | "recheck" | "close"
>;

export function sandboxRunnerOnFirstUse(opts: SandboxRunnerOptions, shared?: DirPins): LazySandboxRunner {
	let making: Promise<SandboxRunner> | undefined;
	let made: SandboxRunner | undefined;
	const hiddenEarly: string[] = [];
	let closed = false;
	const runner = () => {
		making ??= import("./runner.js").then(({ createSandboxRunner }) => {
			const r = createSandboxRunner(opts, shared);
			r.hide(hiddenEarly);
			if (closed) r.close();
			made = r;
			return r;
		});
		return making;
	};
	return {
		ready: async () => (await runner()).ready(),
		run: async (argv, req) => (await runner()).run(argv, req),
		startInTerminal: async (argv, req) => (await runner()).startInTerminal(argv, req),
		wrap: (argv, cwd, env, firstFd) => {
			if (!made) throw new Error("the sandbox runner's wrap() before ready() resolved");
			return made.wrap(argv, cwd, env, firstFd);
		},
		hide: (paths) => {
			if (made) made.hide(paths);
			else hiddenEarly.push(...paths);
		},
		// Nothing was started through a runner never made: nothing to move aside.
		recheck: async () => (made ? made.recheck() : []),
		close: () => {
			closed = true;
			made?.close();
		},
	};
}
