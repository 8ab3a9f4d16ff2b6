/**
 * What a smoke test returns: the result kinds, the one-line summary of what a draft registered,
 * and the mapping from how the child ended to the one terminal result.
 */
import { KeelError, type SerializedError } from "../boundary/errors.js";
import type { ChildOutcome, StreamCapture } from "./child-run.js";
import type { PackageFacts } from "./preflight.js";
import type { DraftError, ErrorPhase, ExtensionRegistrations } from "./report.js";

/** How a smoke test ended: ok, or the way it failed. */
export type SmokeKind = "ok" | "refused" | "error" | "timeout" | "memory" | "exited" | "aborted";

interface SmokeCommon {
	/** Canonical path of the draft (absent when it was refused before it resolved). */
	path?: string;
	elapsedMs: number;
	stdout?: StreamCapture;
	stderr?: StreamCapture;
	/** How the child process ended (the group is killed once the result is known). */
	exit?: { code: number | null; signal: NodeJS.Signals | null };
	package?: PackageFacts;
	/** The temp dir could not be removed (the result is still final). */
	cleanupError?: string;
}

/** A smoke test's outcome: what the draft registered, or the error and how it failed. */
export type SmokeResult =
	| (SmokeCommon & { ok: true; kind: "ok"; summary: string; extension: ExtensionRegistrations })
	| (SmokeCommon & {
			ok: false;
			kind: Exclude<SmokeKind, "ok">;
			error: SerializedError;
			/** kind "error": where it failed and what was thrown. */
			phase?: ErrorPhase;
			thrown?: DraftError;
	  });

function listNames(names: string[], max = 12): string {
	const shown = names.slice(0, max).join(", ");
	return names.length > max ? `${shown}, … (${names.length - max} more)` : shown;
}

function plural(n: number, word: string): string {
	return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** One line a model can read: what the draft registered. */
export function summarize(e: ExtensionRegistrations): string {
	const parts: string[] = [];
	if (e.tools.length)
		parts.push(`${plural(e.tools.length, "tool")} (${listNames(e.tools.map((t) => t.name))})`);
	if (e.commands.length)
		parts.push(`${plural(e.commands.length, "command")} (${listNames(e.commands.map((c) => c.name))})`);
	if (e.flags.length)
		parts.push(`${plural(e.flags.length, "flag")} (${listNames(e.flags.map((f) => f.name))})`);
	if (e.shortcuts.length) parts.push(plural(e.shortcuts.length, "shortcut"));
	if (e.events.length) parts.push(`handlers for ${listNames(e.events.map((v) => v.name))}`);
	if (e.messageRenderers.length) parts.push(plural(e.messageRenderers.length, "message renderer"));
	if (e.providers.length) parts.push(plural(e.providers.length, "provider"));
	const what = parts.length ? parts.join(", ") : "nothing";
	const warn = e.warnings.length ? ` ${plural(e.warnings.length, "warning")}: ${e.warnings[0]}` : "";
	return `The extension loaded and registered ${what}.${warn}`;
}

const EXIT_HINTS: Record<number, string> = {
	13: " (its factory's promise never settled and nothing else kept it running)",
	70: " (the report channel was closed by the draft)",
	71: " (the parent went away)",
	127: " (node could not be started)",
};

/** One or two sentences on a draft that threw: where, what, and the next step when there is one. */
function loadFailure(phase: ErrorPhase, t: DraftError): string {
	const thrown = /[.!?]$/.test(t.message) ? `${t.name}: ${t.message}` : `${t.name}: ${t.message}.`;
	if (phase === "export") return t.message;
	if (phase === "import") {
		const where = t.location ? ` at ${t.location}` : "";
		const hint =
			t.name === "SyntaxError" && !t.location
				? " Run `node --check FILE` to see the line."
				: t.code === "ERR_ACCESS_DENIED"
					? " The smoke test lets a draft read only inside its root."
					: "";
		return `The draft failed to import${where}: ${thrown}${hint}`;
	}
	if (phase === "async") return `A callback the draft scheduled while loading threw: ${thrown}`;
	const hint =
		t.code === "ERR_ACCESS_DENIED" ? " The smoke test lets a draft read only inside its root." : "";
	return `The draft's factory threw: ${thrown}${hint}`;
}

/** Turn how the child ended into the one terminal result. */
export function classify(
	o: ChildOutcome,
	timeoutMs: number,
): Pick<SmokeResult, "ok" | "kind"> & Record<string, unknown> {
	const e = o.ending;
	switch (e.by) {
		case "report": {
			if (e.report.kind === "ok") {
				return {
					ok: true,
					kind: "ok",
					summary: summarize(e.report.extension),
					extension: e.report.extension,
				};
			}
			const t = e.report.error;
			const phase = e.report.phase;
			if (t.name === "RangeError" && /allocation failed|out of memory/i.test(t.message)) {
				return {
					ok: false,
					kind: "memory",
					phase,
					thrown: t,
					error: new KeelError(
						"COMMAND_FAILED",
						`The draft ran out of memory while loading (${t.message}); the smoke test bounds its data size.`,
					).toJSON(),
				};
			}
			return {
				ok: false,
				kind: "error",
				phase,
				thrown: t,
				error: new KeelError("COMMAND_FAILED", loadFailure(phase, t)).toJSON(),
			};
		}
		case "protocol":
			return {
				ok: false,
				kind: "error",
				error: new KeelError(
					"INTERNAL",
					`The smoke test's child sent no usable result: ${e.problem}.`,
				).toJSON(),
			};
		case "timeout":
			return {
				ok: false,
				kind: "timeout",
				error: new KeelError(
					"TIMEOUT",
					`The draft did not finish loading within ${timeoutMs} ms; its process was killed. Look for a loop or a wait at load time.`,
				).toJSON(),
			};
		case "abort":
			return {
				ok: false,
				kind: "aborted",
				error: new KeelError("ABORTED", "The smoke test was aborted.").toJSON(),
			};
		case "spawn":
			return {
				ok: false,
				kind: "exited",
				error: new KeelError(
					"BACKEND_UNAVAILABLE",
					`The smoke test could not start node: ${e.message}.`,
				).toJSON(),
			};
		case "exit": {
			const code = o.exit?.code ?? null;
			const signal = o.exit?.signal ?? null;
			const crashed = signal === "SIGABRT" || signal === "SIGTRAP" || signal === "SIGILL" || code === 134;
			if (o.heapExhausted && crashed) {
				return {
					ok: false,
					kind: "memory",
					error: new KeelError(
						"COMMAND_FAILED",
						"The draft exhausted its heap while loading (V8: out of memory); its process was ended.",
					).toJSON(),
				};
			}
			if (signal === "SIGXCPU") {
				return {
					ok: false,
					kind: "timeout",
					error: new KeelError("TIMEOUT", "The draft used up its CPU-time limit while loading.").toJSON(),
				};
			}
			const how = signal
				? `was killed by ${signal}`
				: `exited with code ${code}${EXIT_HINTS[code ?? -1] ?? ""}`;
			return {
				ok: false,
				kind: "exited",
				error: new KeelError(
					"COMMAND_FAILED",
					`The draft's process ${how} before its factory finished; an extension must not end the process.`,
				).toJSON(),
			};
		}
	}
}
