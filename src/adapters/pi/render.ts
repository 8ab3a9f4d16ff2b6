/**
 * pi renderCall/renderResult for keel tools: the rows come from the pure
 * callLines/resultLines; this file adds timing and caching. While a call runs its row ends in a
 * live "Elapsed 1.2s" (a 1 s timer invalidates the row), and once it ends, in "Took 1.2s", for
 * failures too. The final duration is keel's own elapsedMs from the result details when present.
 */
import { formatDuration } from "../../boundary/timing.js";
import { callLines } from "./format-call.js";
import { type ResultLike, resultLines } from "./format-result.js";
import type { ThemeLike } from "./theme.js";
import { type Component, LinesView } from "./view.js";

/** Row state pi keeps across the call and result renders of one tool call. */
export interface RowState {
	startedAt?: number;
	endedAt?: number;
	timer?: ReturnType<typeof setInterval>;
}

/** The fields of pi's ToolRenderContext that keel reads (0.73 and 1.x). */
export interface RenderContextLike {
	state: RowState;
	executionStarted: boolean;
	expanded: boolean;
	isError: boolean;
	lastComponent: unknown;
	invalidate(): void;
	/** pi 1.x: the measured duration of a finished call. */
	durationMs?: number;
}

export interface RenderOptionsLike {
	expanded: boolean;
	isPartial: boolean;
}

export function timingLine(label: "Elapsed" | "Took", ms: number, theme: ThemeLike): string {
	return theme.fg("muted", `${label} ${formatDuration(Math.max(0, ms))}`);
}

function keelElapsed(details: unknown): number | undefined {
	const v =
		details && typeof details === "object" ? (details as { elapsedMs?: unknown }).elapsedMs : undefined;
	return typeof v === "number" ? v : undefined;
}

function viewFor(last: unknown): LinesView {
	return last instanceof LinesView ? last : new LinesView();
}

function stopTimer(state: RowState): void {
	if (state.timer) clearInterval(state.timer);
	state.timer = undefined;
}

interface Cached {
	expanded: boolean;
	theme: ThemeLike;
	lines: string[];
}

/** Renderers for one tool; caches live in the returned closures (one set per extension instance). */
export function createRenderers(tool: string, now: () => number = Date.now) {
	// Keyed by the args object and by the result's content array: pi hands the same objects back on
	// every redraw (each timer tick), so a 5 MB argument is previewed once, not once a second.
	const calls = new WeakMap<object, Cached>();
	const results = new WeakMap<object, Cached & { isError: boolean; isPartial: boolean }>();

	function renderCall(args: unknown, theme: ThemeLike, ctx: RenderContextLike): Component {
		if (ctx.executionStarted && ctx.state.startedAt === undefined) ctx.state.startedAt = now();
		const expanded = ctx.expanded;
		const key = args && typeof args === "object" ? args : undefined;
		let hit = key ? calls.get(key) : undefined;
		if (!hit || hit.expanded !== expanded || hit.theme !== theme) {
			hit = { expanded, theme, lines: callLines(tool, args, expanded, theme) };
			if (key) calls.set(key, hit);
		}
		return viewFor(ctx.lastComponent).set(hit.lines, expanded);
	}

	function renderResult(
		result: ResultLike,
		options: RenderOptionsLike,
		theme: ThemeLike,
		ctx: RenderContextLike,
	): Component {
		const state = ctx.state;
		state.startedAt ??= now();
		const done = !options.isPartial || ctx.isError;
		if (done) {
			state.endedAt ??= now();
			stopTimer(state);
		} else if (!state.timer) {
			state.timer = setInterval(() => ctx.invalidate(), 1000);
			state.timer.unref?.();
		}
		const o = { expanded: options.expanded, isPartial: options.isPartial, isError: ctx.isError };
		const key = result.content as object;
		let hit = results.get(key);
		if (
			!hit ||
			hit.expanded !== o.expanded ||
			hit.theme !== theme ||
			hit.isError !== o.isError ||
			hit.isPartial !== o.isPartial
		) {
			hit = { ...o, theme, lines: resultLines(tool, result, o, theme) };
			results.set(key, hit);
		}
		const ms = done
			? (keelElapsed(result.details) ?? ctx.durationMs ?? state.endedAt! - state.startedAt)
			: now() - state.startedAt;
		const timing = timingLine(done ? "Took" : "Elapsed", ms, theme);
		return viewFor(ctx.lastComponent).set([...hit.lines, timing], o.expanded);
	}

	return { renderCall, renderResult };
}
