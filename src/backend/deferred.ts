/**
 * Backends whose code is imported on first use. keel's entry point exports every backend, but a
 * session uses one: importing the code of all of them would make every `import("keel")` pay for
 * ssh, the exec scripts and the container transports. So the entry point's factories return a
 * stand-in with the backend's members, and the backend itself is made (its module imported) by
 * the first method called on it.
 *
 * The contract: a stand-in has exactly the members the backend it stands for has (the same
 * optional methods, the same constant flags; test/backends/deferred.test.ts compares them),
 * and every method does what the backend's does. The backends' methods are asynchronous except
 * `process.spawn`, which ProcessOps allows only after `process.ready()` resolved: by then the
 * backend is made. A session makes its backend when it opens (the path guard resolves the roots
 * through it), so what is deferred is the code of the backends a process never opens a session on.
 */
import { backendFact } from "../boundary/backend-facts.js";
import type { AiSdkSandboxSession } from "./container/ai-sdk.js";
import type { ContainerBackend, ContainerBackendOptions } from "./container/index.js";
import type { ContainerTarget } from "./container/targets.js";
import type { ExecBackendOptions, ExecSearchEngine, ExecTransport } from "./exec/index.js";
import type { Backend, ExecOps, FileOps, ProcessOps, SearchOps } from "./types.js";

/** The file methods the exec and ssh backends have (all asynchronous). */
const REMOTE_FILE_METHODS = [
	"realpath",
	"lstat",
	"stat",
	"readlink",
	"readFile",
	"readCurrent",
	"readdir",
	"mkdirp",
	"writeFile",
	"copyFile",
	"hashFile",
	"unlink",
	"sweepTemps",
] as const satisfies readonly (keyof FileOps)[];

type AnyMethod = (...args: any[]) => Promise<unknown>;

/** An object of `names`, each calling the same method of the object `get` resolves to. */
function forwarding<T>(get: () => Promise<T>, names: readonly (keyof T)[]): T {
	const out: Partial<Record<keyof T, AnyMethod>> = {};
	for (const name of names) out[name] = async (...args) => ((await get())[name] as AnyMethod)(...args);
	return out as T;
}

/** A value made on first use: `get()` makes it (once), `made()` is it once made. */
export interface OnFirstUse<T> {
	get(): Promise<T>;
	made(): T | undefined;
}

export function onFirstUse<T>(make: () => Promise<T>): OnFirstUse<T> {
	let making: Promise<T> | undefined;
	let made: T | undefined;
	return {
		get: () => {
			making ??= make().then((v) => {
				made = v;
				return v;
			});
			return making;
		},
		made: () => made,
	};
}

/** What the exec backends and ssh are made of, less their own members (kind, close, ...). */
export type BackendParts = Pick<Backend, "fs" | "exec" | "search" | "process">;

/**
 * The parts of an exec-family or ssh backend, made on first use: files, `exec.run`, search, and
 * (unless `process` is false) a process starter without file-descriptor pipes.
 */
export function partsOnFirstUse(
	kind: string,
	d: OnFirstUse<BackendParts>,
	opts: { process: boolean; handles?: boolean },
): BackendParts {
	const fs = forwarding<FileOps>(async () => (await d.get()).fs, REMOTE_FILE_METHODS);
	// `start` (process handles) only where the real backend has it: its presence is what tools test.
	const exec = forwarding<ExecOps>(
		async () => (await d.get()).exec,
		opts.handles ? ["run", "start"] : ["run"],
	);
	const search = forwarding<SearchOps>(async () => (await d.get()).search, ["grep", "find"]);
	const processOps = async () => {
		const p = (await d.get()).process;
		if (!p) throw backendFact("no-process-handles", { label: kind });
		return p;
	};
	const process: ProcessOps = {
		fdPipes: false,
		ready: async () => (await processOps()).ready(),
		spawn: (req) => {
			const p = d.made()?.process;
			if (!p) throw new Error(`process.spawn on the ${kind} backend before process.ready() resolved`);
			return p.spawn(req);
		},
	};
	return { fs, exec, search, process: opts.process ? process : undefined };
}

/** A whole backend made on first use; its close makes it too (it may do the caller's work: stop a container). */
function backendOnFirstUse(
	kind: string,
	d: OnFirstUse<Backend>,
	opts: { process: boolean; handles?: boolean },
): Backend {
	return { kind, ...partsOnFirstUse(kind, d, opts), close: async () => (await d.get()).close() };
}

/** The exec backend (exec/index.ts), its code imported on first use. */
export function createExecBackend(opts: ExecBackendOptions): Backend {
	const made = onFirstUse(async () => (await import("./exec/index.js")).createExecBackend(opts));
	return backendOnFirstUse(opts.kind ?? "exec", made, { process: true });
}

/** A container backend (container/index.ts), its code imported on first use. */
export function createContainerBackend(
	target: ContainerTarget,
	opts: ContainerBackendOptions = {},
): ContainerBackend {
	const made = onFirstUse(async () =>
		(await import("./container/index.js")).createContainerBackend(target, opts),
	);
	return {
		...backendOnFirstUse(target.kind, made, { process: true, handles: true }),
		hostPrograms: true,
		label: target.label,
		transport: async (argv, topts) => (await made.get()).transport(argv, topts),
		connect: async () => (await made.get()).connect(),
		get shellsOpened() {
			return made.made()?.shellsOpened ?? 0;
		},
	};
}

/** The AI SDK sandbox's transport (container/ai-sdk.ts), its code imported on first use. */
export function aiSdkSandboxTransport(session: AiSdkSandboxSession): ExecTransport {
	const made = onFirstUse(async () => (await import("./container/ai-sdk.js")).aiSdkSandboxTransport(session));
	return async (argv, topts) => (await made.get())(argv, topts);
}

/** The exec backend over an AI SDK sandbox (container/ai-sdk.ts), its code imported on first use. */
export function createAiSdkSandboxBackend(
	session: AiSdkSandboxSession,
	opts: { searchEngine?: ExecSearchEngine } = {},
): Backend {
	const made = onFirstUse(async () =>
		(await import("./container/ai-sdk.js")).createAiSdkSandboxBackend(session, opts),
	);
	return backendOnFirstUse("ai-sdk-sandbox", made, { process: false });
}
