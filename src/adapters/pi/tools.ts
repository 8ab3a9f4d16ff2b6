/**
 * A keel tool as a pi tool: same name, label, description and JSON Schema; execute runs
 * session.call. pi marks a tool error only when execute throws, and builds the error result from
 * the message alone, so a failure throws "[CODE] message" and leaves the structured error in a
 * FailureLog; the extension's tool_result handler then puts it into the result's details.
 */
import type { ExtensionContext, ToolDefinition as PiToolDefinition } from "@mariozechner/pi-coding-agent";
import { fromSystemError } from "../../boundary/system-errors.js";
import type { CallError, Session } from "../../session.js";
import type { Content, ToolDefinition } from "../../tools/types.js";
import { errorText } from "../binding.js";
import { PROMPTS } from "./prompts.js";
import { createRenderers } from "./render.js";

export interface Failure {
	error: CallError;
	elapsedMs: number;
}

/** Failures waiting for their tool_result event, by toolCallId; bounded in case one never comes. */
export class FailureLog {
	private readonly entries = new Map<string, Failure>();

	constructor(private readonly limit = 256) {}

	put(id: string, f: Failure): void {
		this.entries.set(id, f);
		if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
	}

	take(id: string): Failure | undefined {
		const f = this.entries.get(id);
		this.entries.delete(id);
		return f;
	}
}

export interface PiHost {
	/** The keel session for this pi context. */
	session(ctx: ExtensionContext): Promise<Session>;
	failures: FailureLog;
}

/** keel's details plus its elapsedMs, so the time survives in the saved session. */
export function withElapsed(details: unknown, elapsedMs: number): Record<string, unknown> {
	if (details && typeof details === "object" && !Array.isArray(details)) {
		return { ...(details as Record<string, unknown>), elapsedMs };
	}
	return details === undefined ? { elapsedMs } : { value: details, elapsedMs };
}

type PiContent = Awaited<ReturnType<PiToolDefinition["execute"]>>["content"];
const toPiContent = (c: Content[]) => c as PiContent;

/** The pi definition of keel tool `def`. */
export function toPiTool(def: ToolDefinition, host: PiHost): PiToolDefinition {
	const renderers = createRenderers(def.name);
	const a = def.annotations;
	const tool = {
		name: def.name,
		label: def.label,
		description: def.description,
		parameters: def.parameters as unknown as PiToolDefinition["parameters"],
		...PROMPTS[def.name],
		// pi 1.x reads MCP-style hints; 0.73 ignores the field.
		annotations: { readOnlyHint: a.readOnly, destructiveHint: a.destructive, idempotentHint: a.idempotent },
		prepareArguments: def.prepareArguments,
		async execute(
			toolCallId: string,
			params: unknown,
			signal: AbortSignal | undefined,
			onUpdate: ((r: { content: PiContent; details: unknown }) => void) | undefined,
			ctx: ExtensionContext,
		) {
			let session: Session;
			try {
				session = await host.session(ctx);
			} catch (e) {
				const error = fromSystemError(e).toJSON();
				host.failures.put(toolCallId, { error, elapsedMs: 0 });
				throw new Error(errorText(error));
			}
			// An empty partial result opens the result row at once, so its live "Elapsed" shows
			// before the tool produces any output.
			onUpdate?.({ content: [], details: undefined });
			const r = await session.call(def.name, params, {
				signal,
				onUpdate: onUpdate && ((p) => onUpdate({ content: toPiContent(p.content), details: p.details })),
			});
			if (r.ok) return { content: toPiContent(r.content), details: withElapsed(r.details, r.elapsedMs) };
			host.failures.put(toolCallId, { error: r.error, elapsedMs: r.elapsedMs });
			throw new Error(errorText(r.error));
		},
		// pi's built-in edit draws its own frame; keel's rows use pi's standard one for every tool.
		renderShell: "default",
		renderCall: renderers.renderCall,
		renderResult: renderers.renderResult,
	};
	return tool as unknown as PiToolDefinition;
}
