/**
 * Where a container backend runs its programs: the exec client's argv before the program's
 * (`podman exec -i -- NAME`, `kubectl exec -i -n NS POD -c C --`). Light: the CLI parses specs
 * with it before the backend itself is loaded.
 */
import type { ExecPrefix } from "./pipe.js";

/** How to run a command in a container: the argv prefix of its engine's exec, and its name for messages. */
export interface ContainerTarget {
	/** "podman" | "docker" | "k8s": the backend's kind. */
	kind: string;
	/** The exec client's argv before the program's (see execPrefix). */
	prefix: ExecPrefix;
	/** For messages: "podman container web". */
	label: string;
}

/** A container of docker or podman, by name or id. */
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

/** A pod (and optionally one of its containers), reached with kubectl exec. */
export interface KubectlTarget {
	namespace: string;
	pod: string;
	container?: string;
	/** Default "kubectl" on PATH. */
	command?: string;
	/** Options before `exec` (e.g. `--context`, `--kubeconfig`). */
	globalArgs?: string[];
}

/** The target of a docker or podman container. */
export function engineTarget(t: EngineTarget): ContainerTarget {
	const prefix = [t.command ?? t.engine, ...(t.globalArgs ?? []), "exec", "-i"];
	if (t.user) prefix.push("--user", t.user);
	prefix.push("--", t.container);
	return { kind: t.engine, prefix, label: `${t.engine} container ${t.container}` };
}

/** The target of a Kubernetes pod. */
export function kubectlTarget(t: KubectlTarget): ContainerTarget {
	const prefix = [t.command ?? "kubectl", ...(t.globalArgs ?? []), "exec", "-i", "-n", t.namespace, t.pod];
	if (t.container) prefix.push("-c", t.container);
	prefix.push("--");
	const where = `${t.namespace}/${t.pod}${t.container ? `/${t.container}` : ""}`;
	return { kind: "k8s", prefix, label: `pod ${where}` };
}
