/**
 * Container backends (docker://, podman://, k8s://): the exec backend's files, commands, search and
 * python (exec/*: POSIX scripts, probed once) over persistent shells inside the container
 * (shell-transport.ts), reached through the runtime's exec client (`podman exec -i`, `docker exec
 * -i`, `kubectl exec -i`). Nothing is installed in the container; it needs what the exec backend
 * needs (sh, GNU coreutils and findutils, util-linux setsid; python3 for python and process
 * handles; rg/fd optional).
 */
import { backendFact } from "../../boundary/backend-facts.js";
import { createExecBackend, type ExecSearchEngine } from "../exec/index.js";
import type { ExecTransport } from "../exec/transport.js";
import { runnerHandles } from "../ssh/run-live.js";
import type { Backend } from "../types.js";
import { childShellPipe, execPerCall } from "./pipe.js";
import { createShellPool } from "./shell-transport.js";
import type { ContainerTarget } from "./targets.js";

/** Options of createContainerBackend: the target and how files and commands reach it. */
export interface ContainerBackendOptions {
	/** Persistent shells at most (default 4): concurrent calls beyond this wait. */
	maxShells?: number;
	searchEngine?: ExecSearchEngine;
}

/** A backend in a running container or pod, reached through its engine's exec. */
export interface ContainerBackend extends Backend {
	readonly label: string;
	/** The transport the backend runs on (tests, the benchmarks). */
	readonly transport: ExecTransport;
	/** Shells opened so far. */
	readonly shellsOpened: number;
	/** Open a shell now and check the container answers; throws BACKEND_UNAVAILABLE naming the fix. */
	connect(): Promise<void>;
}

export function createContainerBackend(
	target: ContainerTarget,
	opts: ContainerBackendOptions = {},
): ContainerBackend {
	const direct = execPerCall(target.prefix, target.label);
	const shells = createShellPool({
		open: () => childShellPipe(target.prefix, target.label),
		direct,
		maxShells: opts.maxShells,
		label: target.label,
	});
	// Process handles: the ssh backend's command runner on a carrier of its own (python3 in the target).
	const handles = runnerHandles(() => childShellPipe(target.prefix, target.label), target.label);
	const backend = createExecBackend({
		transport: shells.transport,
		kind: target.kind,
		searchEngine: opts.searchEngine,
		close: () => {
			handles.close();
			return shells.close();
		},
	});
	return {
		...backend,
		hostPrograms: true,
		exec: { ...shells.exec, start: (req) => handles.start(req) },
		label: target.label,
		transport: shells.transport,
		get shellsOpened() {
			return shells.opened;
		},
		async connect() {
			let r: { exitCode: number | null };
			try {
				r = await shells.transport(["sh", "-c", "exit 0"], {});
			} catch (e) {
				throw backendFact(
					"shell-unreachable",
					{ label: target.label, reason: (e as Error).message, tool: target.prefix[0] },
					{ cause: e },
				);
			}
			if (r.exitCode !== 0) {
				throw backendFact("no-working-shell", { label: target.label, exitCode: r.exitCode });
			}
		},
	};
}

export { execPerCall } from "./pipe.js";
export { createShellPool } from "./shell-transport.js";

export {
	type ContainerTarget,
	type EngineTarget,
	engineTarget,
	type KubectlTarget,
	kubectlTarget,
} from "./targets.js";
