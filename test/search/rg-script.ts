/**
 * What the rg plan tests share (parallel.test.ts, plans.test.ts, ready-mark.test.ts): whether
 * real rg is here, the pieces of a scripted transport (a fake rg, its output lines, the signals a
 * scripted run waits on) and the request and answer shapes.
 */
import { createLocalTools } from "../../src/backend/search/local-runner.js";
import type { NativeTools } from "../../src/backend/search/native.js";
import type { GrepOutcome, GrepRequest } from "../../src/backend/types.js";

export const realTools = await createLocalTools().detect();
export const HAS_RG = realTools.rg !== undefined;
/** Appended to a real-rg test's name: why it is skipped. */
export const RG = HAS_RG ? "" : " (skipped: rg not found on PATH)";

/** A scripted transport's rg: never run, only named. */
export const fakeTools: NativeTools = { rg: { path: "rg", version: "ripgrep 13.0.0" } };
/** One match line as rg prints it with keel's flags. */
export const matchLine = (path: string, n: number, text = "needle") => Buffer.from(`${path}\0${n}:${text}\n`);
export const hits = (r: GrepOutcome) => r.matches.map((m) => `${m.path}:${m.line}`);
export const req = (path: string, more: Partial<GrepRequest> = {}): GrepRequest => ({
	pattern: "needle",
	path,
	context: 0,
	limit: 100,
	...more,
});
/** The run is the ordered one (--sort path). */
export const sorted = (argv: readonly string[]) => argv.includes("--sort");
/** Resolves when `signal` aborts (a scripted run stopped by the plan). */
export const until = (signal: AbortSignal | undefined) =>
	new Promise<void>((resolve) => {
		if (signal?.aborted) resolve();
		else signal?.addEventListener("abort", () => resolve(), { once: true });
	});
