/**
 * grep and find on `bwrap` run rg and fd inside the sandbox (through its command server), not on
 * the host. rg and fd open what they walk by name, so code in the sandbox that swaps a directory
 * of the workspace for a link while they walk could make a host-side search read the link's
 * target: a file the sandbox cannot see. Inside the sandbox a link resolves in the sandbox's own
 * view, which holds nothing its code cannot read already. Where rg or fd cannot run inside, the
 * JS engine searches on the host, below pinned descriptors (search/walk.ts), which never follows
 * a swapped link.
 */
import { findOnPath, type LocalTools } from "../search/local-runner.js";
import { type ArgvRunner, detectNativeTools, type NativeTools } from "../search/native.js";
import type { LazySandboxRunner } from "./runner-on-first-use.js";

export function sandboxSearchTools(runner: Pick<LazySandboxRunner, "ready" | "run">): LocalTools {
	const run: ArgvRunner = async (argv, o) => {
		// No hold here (RunOptions.hold): a held run starts at once.
		const { bound } = await runner.ready();
		const r = await runner.run(argv, {
			cwd: o.cwd ?? bound[0],
			signal: o.signal,
			onData: (chunk, stream) => (stream === "stderr" ? o.onStderr?.(chunk) : o.onStdout(chunk)),
		});
		return { exitCode: r.exitCode };
	};
	let detected: Promise<NativeTools> | undefined;
	return {
		run,
		// Found on the host's PATH, then probed inside: a tool the sandbox cannot see is absent.
		detect() {
			detected ??= detectNativeTools(run, (name) => findOnPath(name));
			return detected;
		},
	};
}
