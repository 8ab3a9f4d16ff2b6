/**
 * The backends the contract suite runs against. Every entry gets the same tests,
 * unchanged. To add one, append a factory:
 *
 *   { name, available, create, setup?, teardown? }
 *
 * `create(root)` gets the workspace root; the root's parent directory is the test's scratch area
 * (files outside the root, the spill directory) and must be visible to the backend at the same
 * paths. `makeSymlink` makes a link on the backend's side. All backends here run on this machine,
 * so the tests also check the host's process table (pgrep) after an abort.
 */
import { symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import { createSandboxRunner } from "../../src/backend/bwrap/runner.js";
import { createBwrapBackend, createBwrapTransport } from "../../src/backend/bwrap.js";
import { createContainerBackend, engineTarget, kubectlTarget } from "../../src/backend/container/index.js";
import type { SdkBackend } from "../../src/backend/container/sdk-backend.js";
import { createExecBackend as createExecStandIn } from "../../src/backend/deferred.js";
import { createExecBackend, type ExecSearchEngine } from "../../src/backend/exec/index.js";
import type { ExecTransport } from "../../src/backend/exec/transport.js";
import { createLocalBackend } from "../../src/backend/local/index.js";
import { createSshBackend } from "../../src/backend/ssh/index.js";
import type { Backend } from "../../src/backend/types.js";
import { FAKE_KUBECTL, podmanContainer, podmanMissing } from "../fixtures/podman.js";
import { SDK_STANDINS } from "../fixtures/sdk-standins/index.js";
import { NO_RC_FILES, type Sshd, sshdMissing, sshOptions, startSshd } from "../fixtures/sshd.js";
import { type SshTransport, sshTransport } from "./transports.js";

export interface ContractBackend {
	backend: Backend;
	/** Make a symbolic link at `path` pointing to `target`, on the backend's side. */
	makeSymlink(target: string, path: string): Promise<void>;
	cleanup(): Promise<void>;
}

export interface BackendFactory {
	name: string;
	/** true, or why the backend cannot run here (the suite is then skipped with that message). */
	available(): Promise<boolean | string>;
	create(root: string): Promise<ContractBackend>;
	/** Per-test timeout for a slow transport (default: vitest's). */
	testTimeoutMs?: number;
	/** Once before the suite (e.g. start a server) and once after. */
	setup?(): Promise<void>;
	teardown?(): Promise<void>;
}

/** Whether bubblewrap can run its sandbox here: true, or the backend's own error message. */
export async function bwrapAvailable(): Promise<true | string> {
	// Closed after the probe: its scan of the temp directory holds inotify watches (protect-cache.ts).
	const runner = createSandboxRunner({ roots: [tmpdir()] });
	try {
		await runner.ready();
		return true;
	} catch (e) {
		return (e as Error).message;
	} finally {
		runner.close();
	}
}

/** `ln -s` through a transport (the backend's side). */
async function transportSymlink(transport: ExecTransport, target: string, path: string): Promise<void> {
	const stderr: Buffer[] = [];
	const r = await transport(["ln", "-s", "--", target, path], {
		onData: (c, s) => {
			if (s === "stderr") stderr.push(c);
		},
	});
	if (r.exitCode !== 0) throw new Error(`ln -s failed: ${Buffer.concat(stderr).toString()}`);
}

function execFactory(
	name: string,
	available: () => Promise<boolean | string>,
	transportFor: (scratch: string) => ExecTransport,
	searchEngine: ExecSearchEngine = "auto",
	make: typeof createExecBackend = createExecBackend,
): BackendFactory {
	return {
		name,
		available,
		async create(root) {
			const transport = transportFor(dirname(root));
			return {
				backend: make({ transport, searchEngine }),
				makeSymlink: (target, path) => transportSymlink(transport, target, path),
				cleanup: async () => {},
			};
		},
	};
}

/** The exec backend over the OpenSSH client and the test sshd (started once for the suite). */
function execSshFactory(): BackendFactory {
	let sshd: Sshd | undefined;
	let transport: SshTransport | undefined;
	const factory = execFactory(
		"exec (ssh transport)",
		async () => sshdMissing() ?? true,
		() => {
			if (!transport) throw new Error("sshd not started");
			return transport;
		},
	);
	return {
		...factory,
		testTimeoutMs: 300_000,
		async setup() {
			sshd = await startSshd(NO_RC_FILES);
			transport = sshTransport(sshd);
		},
		async teardown() {
			transport?.close();
			await sshd?.stop();
			sshd = transport = undefined;
		},
	};
}

export const BACKENDS: BackendFactory[] = [
	{
		name: "local",
		available: async () => true,
		async create() {
			return { backend: createLocalBackend(), makeSymlink: (t, p) => symlink(t, p), cleanup: async () => {} };
		},
	},
	{
		name: "bwrap",
		available: bwrapAvailable,
		async create(root) {
			return {
				backend: createBwrapBackend({ roots: [root] }),
				makeSymlink: (t, p) => symlink(t, p), // bwrap's files are this machine's
				cleanup: async () => {},
			};
		},
	},
	// As keel's entry point exports it: made on first use (backend/deferred.ts).
	execFactory(
		"exec (bwrap transport)",
		bwrapAvailable,
		(scratch) => createBwrapTransport({ roots: [scratch] }),
		"auto",
		createExecStandIn,
	),
	execFactory(
		"exec (bwrap transport, fallback search)",
		bwrapAvailable,
		(scratch) => createBwrapTransport({ roots: [scratch] }),
		"fallback",
	),
	execSshFactory(),
	sshFactory(),
	podmanFactory(),
	podmanFactory("k8s (fake kubectl → podman)"),
	...SDK_STANDINS.map((s) => sdkFactory(s.name, s.create)),
];

/**
 * The backends a run declares contract tests for: local always (the fast tier), every other one
 * only when the run includes the `backends` suite (test/tiers.ts), as test:all does.
 */
export function contractBackends(includedSuites: readonly string[]): BackendFactory[] {
	return includedSuites.includes("backends") ? BACKENDS : BACKENDS.filter((f) => f.name === "local");
}

/**
 * keel's sandbox-SDK modules (src/backend/container/{e2b,daytona,modal,vercel-sandbox}.ts) on local
 * stand-ins of each SDK's object (test/fixtures/sdk-standins): real processes on this machine with
 * the SDK's documented semantics; no SDK service runs here.
 */
function sdkFactory(name: string, create: () => SdkBackend): BackendFactory {
	return {
		name,
		available: async () => true,
		testTimeoutMs: 120_000,
		async create() {
			const backend = create();
			return {
				backend,
				makeSymlink: (target, path) => transportSymlink(backend.transport, target, path),
				cleanup: () => backend.close(),
			};
		},
	};
}

/**
 * The container backend (persistent shells over `podman exec -i`) in the CI's podman container;
 * with a name, over `kubectl exec -i` with test/fixtures/fake-kubectl standing in for kubectl
 * (no cluster here: it checks keel's kubectl argv and runs `podman exec -i` in its place).
 */
function podmanFactory(kubectl?: string): BackendFactory {
	const target = () =>
		kubectl
			? kubectlTarget({ namespace: "keel", pod: podmanContainer(), container: "main", command: FAKE_KUBECTL })
			: engineTarget({ engine: "podman", container: podmanContainer() });
	return {
		name: kubectl ?? "podman",
		available: async () => podmanMissing() ?? true,
		testTimeoutMs: 120_000,
		async create() {
			const backend = createContainerBackend(target());
			return {
				backend,
				makeSymlink: (target, path) => transportSymlink(backend.transport, target, path),
				cleanup: () => backend.close(),
			};
		},
	};
}

/** keel's ssh backend (ssh2: SFTP files, persistent remote shells) against the test sshd. */
function sshFactory(): BackendFactory {
	let sshd: Sshd | undefined;
	return {
		name: "ssh",
		available: async () => sshdMissing() ?? true,
		testTimeoutMs: 120_000,
		async setup() {
			sshd = await startSshd(NO_RC_FILES);
		},
		async teardown() {
			await sshd?.stop();
			sshd = undefined;
		},
		async create() {
			if (!sshd) throw new Error("sshd not started");
			const backend = createSshBackend(sshOptions(sshd));
			const makeSymlink = async (target: string, path: string) => {
				const q = (x: string) => `'${x.replace(/'/g, "'\\''")}'`;
				const r = await backend.exec.run({
					command: `ln -s -- ${q(target)} ${q(path)}`,
					cwd: "/",
					onData() {},
				});
				if (r.exitCode !== 0) throw new Error(`ln -s failed with ${r.exitCode}`);
			};
			return { backend, makeSymlink, cleanup: () => backend.close() };
		},
	};
}
