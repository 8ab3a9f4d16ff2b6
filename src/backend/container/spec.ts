/**
 * `docker://CONTAINER/path`, `podman://CONTAINER/path`, `k8s://NAMESPACE/POD[/CONTAINER]/path`
 * → a ContainerTarget and the workspace root inside it. For k8s the segment after POD names the
 * container; leave it empty for the pod's default container: `k8s://ns/pod//work`.
 * Names are taken as written (not URL-parsed: container names keep their case and underscores).
 */
import { KeelError } from "../../boundary/errors.js";
import { type ContainerTarget, engineTarget, kubectlTarget } from "./targets.js";

export const CONTAINER_SCHEMES = ["docker://", "podman://", "k8s://"] as const;

/** A parsed `docker://`, `podman://` or `k8s://` backend spec: the target and the workspace path in it. */
export interface ContainerSpec {
	target: ContainerTarget;
	/** Absolute path inside the container, or undefined when the spec names none. */
	root?: string;
}

/** Container, pod and namespace names: what docker, podman and Kubernetes accept, nothing that could be an option. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export function isContainerSpec(spec: string): boolean {
	return CONTAINER_SCHEMES.some((s) => spec.startsWith(s));
}

/** Parse a container backend spec (`podman://CONTAINER/path`, `k8s://NS/POD[/CONTAINER]/path`); INVALID_ARGS when malformed. */
export function parseContainerSpec(spec: string): ContainerSpec {
	const scheme = CONTAINER_SCHEMES.find((s) => spec.startsWith(s));
	const usage =
		scheme === "k8s://" ? "k8s://NAMESPACE/POD[/CONTAINER]/path" : `${scheme ?? "podman://"}CONTAINER/path`;
	const bad = (why: string) =>
		new KeelError("INVALID_ARGS", `Invalid backend "${spec}": ${why}; use ${usage}.`);
	if (!scheme) throw bad("the scheme must be docker://, podman:// or k8s://");
	const rest = spec.slice(scheme.length);
	if (rest.includes("\0")) throw bad("it contains a NUL byte");
	const parts = rest.split("/");
	const names = scheme === "k8s://" ? 2 : 1;
	for (let i = 0; i < names; i++) {
		if (!NAME.test(parts[i] ?? "")) throw bad(`"${parts[i] ?? ""}" is not a valid name`);
	}
	let container: string | undefined;
	let pathParts = parts.slice(names);
	if (scheme === "k8s://" && pathParts.length > 0) {
		container = pathParts[0] || undefined;
		if (container !== undefined && !NAME.test(container))
			throw bad(`"${container}" is not a valid container name`);
		pathParts = pathParts.slice(1);
	}
	const path = pathParts.length > 0 ? `/${pathParts.join("/")}`.replace(/\/+/g, "/") : "";
	const root = path === "" || path === "/" ? path || undefined : path.replace(/\/$/, "");
	const target =
		scheme === "k8s://"
			? kubectlTarget({ namespace: parts[0], pod: parts[1], container })
			: engineTarget({ engine: scheme === "docker://" ? "docker" : "podman", container: parts[0] });
	return { target, root };
}
