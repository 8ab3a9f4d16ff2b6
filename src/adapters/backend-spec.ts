/**
 * `--backend SPEC` for the CLI: `local` (default), `bwrap` (commands in a bubblewrap sandbox; with
 * `--network` to keep the network), or `ssh://user@host[:port]/path` (`--identity FILE`,
 * `--insecure-host-key`; the host may be a ~/.ssh/config alias, whose HostName, User, Port and
 * IdentityFile apply where the spec and flags give none), or a container: `docker://NAME/path`,
 * `podman://NAME/path`, `k8s://NAMESPACE/POD[/CONTAINER]/path` (persistent shells over the runtime's
 * `exec -i`). Heavy backends are imported only when asked for.
 */
import { resolve } from "node:path";
import { isContainerSpec, parseContainerSpec } from "../backend/container/spec.js";
import { parseSshSpecAsWritten } from "../backend/ssh/spec.js";
import type { Backend } from "../backend/types.js";

export interface BackendFlags {
	backend?: string;
	network?: boolean;
	/** bwrap: host variables to pass into the sandbox by name. */
	env?: string[];
	identity?: string;
	insecureHostKey?: boolean;
}

export interface BackendChoice {
	/** undefined: the session's default (local). */
	open?: (
		root: string,
		allow: string[],
		allowRead: string[],
		protection?: { allowProtected?: boolean; protectedPaths?: string[] },
	) => Promise<Backend>;
	/** A root the spec itself names (ssh://host/path), overriding --root. */
	root?: string;
}

export class BackendSpecError extends Error {}

/** How each option is spelled in error messages: the CLI's flags here, the pi extension's --keel-*. */
export type BackendOptionNames = Record<keyof BackendFlags, string>;

export const CLI_OPTION_NAMES: BackendOptionNames = {
	backend: "--backend",
	network: "--network",
	env: "--env",
	identity: "--identity",
	insecureHostKey: "--insecure-host-key",
};

export function chooseBackend(
	flags: BackendFlags,
	names: BackendOptionNames = CLI_OPTION_NAMES,
): BackendChoice {
	const spec = flags.backend ?? "local";
	if (flags.network && spec !== "bwrap")
		throw new BackendSpecError(`${names.network} only applies to ${names.backend} bwrap`);
	if ((flags.identity || flags.insecureHostKey) && !spec.startsWith("ssh://")) {
		throw new BackendSpecError(
			`${names.identity} and ${names.insecureHostKey} only apply to ${names.backend} ssh://...`,
		);
	}
	const env = flags.env ?? [];
	if (env.length > 0 && spec !== "bwrap")
		throw new BackendSpecError(`${names.env} only applies to ${names.backend} bwrap`);
	const badName = env.find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
	if (badName !== undefined)
		throw new BackendSpecError(`${names.env} takes a variable name (got "${badName}")`);
	if (spec === "local") return {};
	if (spec === "bwrap") {
		return {
			open: async (root, allow, allowRead, protection = {}) => {
				const { createBwrapBackend } = await import("../backend/bwrap.js");
				const backend = createBwrapBackend({
					roots: [root, ...allow.map((p) => resolve(root, p))],
					readOnly: allowRead.map((p) => resolve(root, p)),
					network: flags.network ?? false,
					passEnv: env,
					allowProtected: protection.allowProtected,
					protectedPaths: protection.protectedPaths,
				});
				await backend.ready();
				return backend;
			},
		};
	}
	if (spec.startsWith("ssh://")) return chooseSsh(spec, flags);
	if (isContainerSpec(spec)) return chooseContainer(spec);
	throw new BackendSpecError(
		`unknown backend "${spec}" (use local, bwrap or ssh://user@host[:port]/path, or a container: docker://NAME/path, podman://NAME/path, k8s://NAMESPACE/POD[/CONTAINER]/path)`,
	);
}

function chooseContainer(spec: string): BackendChoice {
	let parsed: ReturnType<typeof parseContainerSpec>;
	try {
		parsed = parseContainerSpec(spec);
	} catch (e) {
		throw new BackendSpecError((e as Error).message);
	}
	if (!parsed.root) {
		throw new BackendSpecError(
			`${spec} needs the directory to work in inside the container, e.g. ${spec.replace(/\/*$/, "")}/work`,
		);
	}
	return {
		root: parsed.root,
		open: async () => {
			const { createContainerBackend } = await import("../backend/container/index.js");
			const backend = createContainerBackend(parsed.target);
			await backend.connect(); // fail fast: no such container, runtime missing
			return backend;
		},
	};
}

function chooseSsh(spec: string, flags: BackendFlags): BackendChoice {
	let target: ReturnType<typeof parseSshSpecAsWritten>;
	try {
		// The port as written: without one, ~/.ssh/config's Port (then 22) applies.
		target = parseSshSpecAsWritten(spec);
	} catch (e) {
		throw new BackendSpecError((e as Error).message);
	}
	if (!target.root)
		throw new BackendSpecError("ssh:// needs the remote directory to work in: ssh://user@host[:port]/path");
	return {
		root: target.root,
		open: async () => {
			const { createSshBackend } = await import("../backend/ssh/index.js");
			const backend = createSshBackend({
				host: target.host,
				port: target.port,
				username: target.username,
				identityFile: flags.identity,
				insecureHostKey: flags.insecureHostKey,
			});
			await backend.connect(); // fail fast: host key, authentication, unreachable
			return backend;
		},
	};
}
