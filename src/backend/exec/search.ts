/**
 * SearchOps over an exec transport: rg and fd run on the target when it has them (the same
 * engines as local, driven through an ArgvRunner over the transport), and the portable fallback
 * (fallback-search.ts: find(1) + sh + base64, matched here with the JS engine's rules) when not.
 * Tools are detected once per backend object.
 */

import { hostProgram, readHostLine } from "../remote/host-programs.js";
import {
	type ArgvRunner,
	createNativeSearch,
	detectNativeTools,
	type NativeTools,
	runCollect,
} from "../search/native.js";
import type { SearchOps } from "../types.js";
import { createFallbackSearch } from "./fallback-search.js";
import type { ExecTransport } from "./transport.js";

export type ExecSearchEngine = "auto" | "native" | "fallback";

/** search_in_dir.sh: cd to $1, then exec the rest (a cd that fails is the shell's status). */
const searchInDirScript = hostProgram(() => readHostLine("search_in_dir.sh"));

/** The argv that runs `argv` in `cwd` on the target. */
export function searchInDir(cwd: string, argv: readonly string[]): string[] {
	return ["sh", "-c", searchInDirScript(), "sh", cwd, ...argv];
}

/** The transport as the search engines' ArgvRunner (abort resolves with exitCode null). */
export function transportRunner(transport: ExecTransport): ArgvRunner {
	return async (argv, opts) => {
		const full = opts.cwd && opts.cwd !== "/" ? searchInDir(opts.cwd, argv) : [...argv];
		try {
			return await transport(full, {
				signal: opts.signal,
				onData: (chunk, stream) => (stream === "stdout" ? opts.onStdout(chunk) : opts.onStderr?.(chunk)),
			});
		} catch (e) {
			if (opts.signal?.aborted) return { exitCode: null };
			throw e;
		}
	};
}

async function locate(run: ArgvRunner, name: string): Promise<string | undefined> {
	const r = await runCollect(run, ["sh", "-c", 'command -v "$1"', "sh", name]);
	const path = r.stdout.trim();
	return r.exitCode === 0 && path.startsWith("/") ? path : undefined;
}

export function createExecSearch(transport: ExecTransport, engine: ExecSearchEngine = "auto"): SearchOps {
	const run = transportRunner(transport);
	const fallback = createFallbackSearch(transport);
	if (engine === "fallback") return fallback;
	let detected: Promise<{ ops: SearchOps; tools: NativeTools }> | undefined;
	const native = () => {
		detected ??= detectNativeTools(run, (name) => locate(run, name)).then(
			(tools) => ({ ops: createNativeSearch(run, tools), tools }),
			(e) => {
				detected = undefined; // transient: detect again next time
				throw e;
			},
		);
		return detected;
	};
	return {
		async grep(req) {
			const n = await native();
			return engine === "native" || n.tools.rg ? n.ops.grep(req) : fallback.grep(req);
		},
		async find(req) {
			const n = await native();
			return engine === "native" || n.tools.fd ? n.ops.find(req) : fallback.find(req);
		},
	};
}
