/**
 * An ExecTransport that runs each argv in its own bubblewrap sandbox on this machine: the exec
 * backend over it is a sandbox where file operations, too, happen inside (only the binds are
 * visible). Aborting a call kills its sandbox, and with it every process inside.
 */
import type { ExecTransport } from "../exec/transport.js";
import type { SandboxRunnerOptions } from "./runner.js";
import { sandboxRunnerOnFirstUse } from "./runner-on-first-use.js";

export interface BwrapTransport extends ExecTransport {
	/** Build and probe the sandbox now; BACKEND_UNAVAILABLE names the fix. */
	ready(): Promise<void>;
	/** Kills its long-lived sandboxes and frees the kept protected-set scan's watches. */
	close(): void;
}

export function createBwrapTransport(opts: SandboxRunnerOptions): BwrapTransport {
	const runner = sandboxRunnerOnFirstUse(opts);
	const transport: ExecTransport = async (argv, o) => {
		const { bound } = await runner.ready();
		const r = await runner.run(argv, {
			cwd: bound[0], // the workspace, canonical
			stdin: o.stdin,
			signal: o.signal,
			onData: (chunk, stream) => o.onData?.(chunk, stream),
		});
		return { exitCode: r.exitCode };
	};
	return Object.assign(transport, {
		ready: async () => {
			await runner.ready();
		},
		close: () => runner.close(),
	});
}
