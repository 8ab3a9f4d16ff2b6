/**
 * keel's backend on a sandbox SDK's launcher (sdk-process.ts): with stdin on a running process,
 * the container backend's persistent shells (shell-transport.ts) on a long-lived `sh`, one SDK
 * process per call for streamed stdin (python's mux); without (Vercel Sandbox 3.5), one SDK
 * command per call and no python.
 */
import { backendFact } from "../../boundary/backend-facts.js";
import { createExecBackend, type ExecSearchEngine } from "../exec/index.js";
import type { ExecTransport } from "../exec/transport.js";
import type { Backend } from "../types.js";
import { type SdkLauncher, sdkShellPipe, sdkTransport } from "./sdk-process.js";
import { createShellPool } from "./shell-transport.js";

/** Options of a sandbox SDK backend (E2B, Vercel, Daytona, Modal): the workspace there and the helper's bounds. */
export interface SdkBackendOptions {
	/** Persistent shells at most (default 4). */
	maxShells?: number;
	searchEngine?: ExecSearchEngine;
	/** "e2b", "daytona", ...: the backend's kind. */
	kind?: string;
}

/** A backend in a sandbox reached through its vendor's SDK. */
export interface SdkBackend extends Backend {
	readonly label: string;
	readonly transport: ExecTransport;
	/** Shells opened so far (0 on a launcher without stdin). */
	readonly shellsOpened: number;
	/** Run `sh -c 'exit 0'` now; throws BACKEND_UNAVAILABLE naming the sandbox. */
	connect(): Promise<void>;
}

export function sdkBackend(launcher: SdkLauncher, opts: SdkBackendOptions = {}): SdkBackend {
	const direct = sdkTransport(launcher);
	const pool = launcher.stdin
		? createShellPool({
				open: () => sdkShellPipe(launcher),
				direct,
				maxShells: opts.maxShells,
				label: launcher.label,
			})
		: undefined;
	const transport = pool?.transport ?? direct;
	const backend = createExecBackend({
		transport,
		kind: opts.kind ?? "sdk",
		searchEngine: opts.searchEngine,
		close: () => pool?.close() ?? Promise.resolve(),
	});
	return {
		...backend,
		...(pool ? { exec: pool.exec } : { process: undefined }),
		label: launcher.label,
		transport,
		get shellsOpened() {
			return pool?.opened ?? 0;
		},
		async connect() {
			let r: { exitCode: number | null };
			try {
				r = await transport(["sh", "-c", "exit 0"], {});
			} catch (e) {
				throw backendFact(
					"shell-unreachable",
					{ label: launcher.label, reason: (e as Error).message },
					{ cause: e },
				);
			}
			if (r.exitCode !== 0) {
				throw backendFact("no-working-shell", { label: launcher.label, exitCode: r.exitCode });
			}
		},
	};
}
