/**
 * What a smoke test may bring back from the child: registration metadata only.
 *
 * The child bounds everything it records (the limits below are handed to it on its command line);
 * the parent does not trust that and copies the child's report field by field through the same
 * bounds, dropping anything it does not know. The draft shares the child's process and can write
 * to the report channel too, so a report counts only when it carries the nonce the child read from
 * its stdin before any draft code ran.
 */

/** Bounds on one report; the child receives them as JSON (argv[3]). */
export const REPORT_LIMITS = {
	/** Entries kept per list (tools, flags, commands, ...). */
	items: 100,
	/** Characters kept of a name (tool, flag, command, event, ...). */
	name: 128,
	/** Characters kept of a label, description or prompt snippet. */
	text: 400,
	/** Characters of a tool's parameter schema as JSON; a larger schema is omitted, not cut. */
	schemaChars: 8192,
	schemaDepth: 32,
	warnings: 20,
	/** Characters kept of a thrown error's message; stack frames kept, and characters per frame. */
	message: 1000,
	stackLines: 20,
	stackLine: 300,
} as const;

export type ReportLimits = typeof REPORT_LIMITS;

/** Bytes accepted on the report channel; a longer report is a protocol failure. */
export const MAX_REPORT_BYTES = 512 * 1024;

/** A tool an extension draft registered: its name, description and parameter schema. */
export interface ToolRegistration {
	name: string;
	label?: string;
	description?: string;
	promptSnippet?: string;
	/** The parameter JSON schema, when it fits the bound (functions and symbols dropped). */
	parameters?: unknown;
	/** Why `parameters` is missing although the draft gave one (too large, cyclic, unreadable). */
	parametersOmitted?: string;
	/** Function-valued fields (execute, renderCall, renderResult, ...): named, never called. */
	functions: string[];
}

export interface FlagRegistration {
	name: string;
	type?: string;
	description?: string;
	default?: boolean | string;
}

export interface CommandRegistration {
	name: string;
	description?: string;
}

export interface ShortcutRegistration {
	key: string;
	description?: string;
}

export interface ProviderRegistration {
	name: string;
	/** How many models the provider config lists (the config itself, API keys included, stays behind). */
	models?: number;
}

/** Everything a draft registered while its factory ran. */
export interface ExtensionRegistrations {
	tools: ToolRegistration[];
	flags: FlagRegistration[];
	commands: CommandRegistration[];
	shortcuts: ShortcutRegistration[];
	/** pi events subscribed with `pi.on`, with the number of handlers each. */
	events: { name: string; handlers: number }[];
	messageRenderers: string[];
	providers: ProviderRegistration[];
	/** Channels subscribed on `pi.events` (the shared event bus). */
	eventBus: string[];
	/** Things pi would reject or ignore: missing fields, duplicates, unknown events, load-time actions. */
	warnings: string[];
	/** Registrations past the per-list bound, counted but not kept. */
	dropped?: number;
}

export interface DraftError {
	name: string;
	message: string;
	code?: string;
	/** "file:line" of a syntax error, when Node names it (CommonJS; for ESM run `node --check FILE`). */
	location?: string;
	/** Stack frames only (`at ...` lines): never the source excerpts Node puts in front of some errors. */
	stack?: string;
}

/** Where the draft failed: importing it, finding its factory, running it, or later (a stray callback). */
export type ErrorPhase = "import" | "export" | "factory" | "async";

export type ChildReport =
	| { kind: "ok"; extension: ExtensionRegistrations }
	| { kind: "error"; phase: ErrorPhase; error: DraftError };

export class ReportError extends Error {}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A string cut to `max` characters (plus an ellipsis), never splitting a surrogate pair. */
export function boundText(s: string, max: number): string {
	if (s.length <= max) return s;
	let end = max;
	const c = s.charCodeAt(end - 1);
	if (c >= 0xd800 && c <= 0xdbff) end--;
	return `${s.slice(0, end)}…`;
}

function str(v: unknown, max: number): string | undefined {
	return typeof v === "string" ? boundText(v, max) : undefined;
}

function name(v: unknown): string {
	const s = str(v, REPORT_LIMITS.name);
	if (s === undefined) throw new ReportError("a registration without a name");
	return s;
}

function list<T>(v: unknown, each: (item: unknown) => T): T[] {
	if (v === undefined) return [];
	if (!Array.isArray(v)) throw new ReportError("a list is not an array");
	return v.slice(0, REPORT_LIMITS.items).map(each);
}

/** Copy an object's defined fields (an undefined field is left out, as JSON would). */
function defined<T extends Obj>(o: T): T {
	for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
	return o;
}

function obj(v: unknown): Obj {
	if (!isObj(v)) throw new ReportError("an entry is not an object");
	return v;
}

function schema(v: unknown): { parameters?: unknown; parametersOmitted?: string } {
	if (v === undefined) return {};
	const json = JSON.stringify(v);
	if (json === undefined || json.length > REPORT_LIMITS.schemaChars + 64) {
		return { parametersOmitted: `larger than ${REPORT_LIMITS.schemaChars} characters as JSON` };
	}
	return { parameters: JSON.parse(json) };
}

function tool(v: unknown): ToolRegistration {
	const t = obj(v);
	return defined({
		name: name(t.name),
		label: str(t.label, REPORT_LIMITS.text),
		description: str(t.description, REPORT_LIMITS.text),
		promptSnippet: str(t.promptSnippet, REPORT_LIMITS.text),
		...schema(t.parameters),
		...(typeof t.parametersOmitted === "string"
			? { parametersOmitted: boundText(t.parametersOmitted, REPORT_LIMITS.text) }
			: {}),
		functions: list(t.functions, (f) => name(f)),
	});
}

function extension(v: unknown): ExtensionRegistrations {
	const e = obj(v);
	const dropped = typeof e.dropped === "number" && e.dropped > 0 ? Math.floor(e.dropped) : undefined;
	return defined({
		tools: list(e.tools, tool),
		flags: list(e.flags, (x) => {
			const f = obj(x);
			const d = f.default;
			return defined({
				name: name(f.name),
				type: str(f.type, REPORT_LIMITS.name),
				description: str(f.description, REPORT_LIMITS.text),
				default: typeof d === "boolean" ? d : str(d, REPORT_LIMITS.text),
			});
		}),
		commands: list(e.commands, (x) => {
			const c = obj(x);
			return defined({ name: name(c.name), description: str(c.description, REPORT_LIMITS.text) });
		}),
		shortcuts: list(e.shortcuts, (x) => {
			const s = obj(x);
			return defined({ key: name(s.key), description: str(s.description, REPORT_LIMITS.text) });
		}),
		events: list(e.events, (x) => {
			const ev = obj(x);
			const n = ev.handlers;
			return { name: name(ev.name), handlers: typeof n === "number" && n > 0 ? Math.floor(n) : 1 };
		}),
		messageRenderers: list(e.messageRenderers, name),
		providers: list(e.providers, (x) => {
			const p = obj(x);
			const m = p.models;
			return defined({ name: name(p.name), models: typeof m === "number" ? Math.floor(m) : undefined });
		}),
		eventBus: list(e.eventBus, name),
		warnings: list(e.warnings, (w) => str(w, REPORT_LIMITS.text) ?? "").slice(0, REPORT_LIMITS.warnings),
		dropped,
	});
}

function draftError(v: unknown): DraftError {
	const e = obj(v);
	const stack = str(e.stack, REPORT_LIMITS.stackLines * (REPORT_LIMITS.stackLine + 1));
	return defined({
		name: str(e.name, REPORT_LIMITS.name) ?? "Error",
		message: str(e.message, REPORT_LIMITS.message) ?? "",
		code: str(e.code, REPORT_LIMITS.name),
		location: str(e.location, REPORT_LIMITS.text),
		// Frames only, even if the child sent more.
		stack: stack
			?.split("\n")
			.filter((l) => /^\s+at /.test(l))
			.slice(0, REPORT_LIMITS.stackLines)
			.join("\n"),
	});
}

const PHASES: readonly ErrorPhase[] = ["import", "export", "factory", "async"];

/** Parse and re-bound one report line; throws ReportError when it is not the child's report. */
export function parseReport(line: string, nonce: string): ChildReport {
	let v: unknown;
	try {
		v = JSON.parse(line);
	} catch {
		throw new ReportError("the report is not JSON");
	}
	if (!isObj(v) || v.nonce !== nonce) throw new ReportError("the report does not carry the child's nonce");
	if (v.kind === "ok") return { kind: "ok", extension: extension(v.extension) };
	if (v.kind === "error") {
		const phase = PHASES.includes(v.phase as ErrorPhase) ? (v.phase as ErrorPhase) : "factory";
		return { kind: "error", phase, error: draftError(v.error) };
	}
	throw new ReportError("the report has an unknown kind");
}
