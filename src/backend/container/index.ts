/**
 * Container backends (docker://, podman://, k8s://): the exec backend's files, commands, search and
 * python (exec/*: POSIX scripts, probed once) over persistent shells inside the container
 * (shell-transport.ts), reached through the runtime's exec client (`podman exec -i`, `docker exec
 * -i`, `kubectl exec -i`). Nothing is installed in the container; it needs what the exec backend
 * needs (sh, GNU coreutils and findutils, util-linux setsid; python3 for python; rg/fd optional).
 */
import { KeelError } from "../../boundary/errors.js";
import { createExecBackend, type ExecSearchEngine } from "../exec/index.js";
import type { ExecTransport } from "../exec/transport.js";
import type { Backend } from "../types.js";
import { childShellPipe, type ExecPrefix, execPerCall } from "./pipe.js";
import { createShellTransport } from "./shell-transport.js";

export interface ContainerTarget {
	/** "podman" | "docker" | "k8s": the backend's kind. */
	kind: string;
	/** The exec client's argv before the program's (see execPrefix). */
	prefix: ExecPrefix;
	/** For messages: "podman container web". */
	label: string;
}

export interface ContainerBackendOptions {
	/** Persistent shells at most (default 4): concurrent calls beyond this wait. */
	maxShells?: number;
	searchEngine?: ExecSearchEngine;
}

export interface ContainerBackend extends Backend {
	readonly label: string;
	/** The transport the backend runs on (tests, the benchmarks). */
	readonly transport: ExecTransport;
	/** Shells opened so far. */
	readonly shellsOpened: number;
	/** Open a shell now and check the container answers; throws BACKEND_UNAVAILABLE naming the fix. */
	connect(): Promise<void>;
}

export interface EngineTarget {
	engine: "podman" | "docker";
	container: string;
	/** The runtime's executable (default: the engine's name on PATH). */
	command?: string;
	/** Global options before `exec` (e.g. podman's `--cgroup-manager=cgroupfs`). */
	globalArgs?: string[];
	/** Run as this user inside the container (`--user`). */
	user?: string;
}

export interface KubectlTarget {
	namespace: string;
	pod: string;
	container?: string;
	/** Default "kubectl" on PATH. */
	command?: string;
	/** Options before `exec` (e.g. `--context`, `--kubeconfig`). */
	globalArgs?: string[];
}

export function engineTarget(t: EngineTarget): ContainerTarget {
	const prefix = [t.command ?? t.engine, ...(t.globalArgs ?? []), "exec", "-i"];
	if (t.user) prefix.push("--user", t.user);
	prefix.push("--", t.container);
	return { kind: t.engine, prefix, label: `${t.engine} container ${t.container}` };
}

export function kubectlTarget(t: KubectlTarget): ContainerTarget {
	const prefix = [t.command ?? "kubectl", ...(t.globalArgs ?? []), "exec", "-i", "-n", t.namespace, t.pod];
	if (t.container) prefix.push("-c", t.container);
	prefix.push("--");
	const where = `${t.namespace}/${t.pod}${t.container ? `/${t.container}` : ""}`;
	return { kind: "k8s", prefix, label: `pod ${where}` };
}

export function createContainerBackend(
	target: ContainerTarget,
	opts: ContainerBackendOptions = {},
): ContainerBackend {
	const direct = execPerCall(target.prefix, target.label);
	const shells = createShellTransport({
		open: () => childShellPipe(target.prefix, target.label),
		direct,
		maxShells: opts.maxShells,
		label: target.label,
	});
	const backend = createExecBackend({
		transport: shells.transport,
		kind: target.kind,
		searchEngine: opts.searchEngine,
		close: () => shells.close(),
	});
	return {
		...backend,
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
				throw new KeelError(
					"BACKEND_UNAVAILABLE",
					`Cannot run a shell in the ${target.label} (${(e as Error).message}); check that it is running and that ${target.prefix[0]} works here.`,
					{ cause: e },
				);
			}
			if (r.exitCode !== 0) {
				throw new KeelError(
					"BACKEND_UNAVAILABLE",
					`The ${target.label} has no working sh (exit ${r.exitCode}).`,
				);
			}
		},
	};
}

export { execPerCall } from "./pipe.js";
export { createShellTransport } from "./shell-transport.js";
