/**
 * The child side of keel's extension smoke test; smoke.ts starts it.
 *
 * Node runs this file with the draft's path as argv[2] and the report bounds as JSON in argv[3];
 * a 32-character nonce arrives on stdin and fd 3 is the report channel. It imports the draft,
 * calls its default export with a fake pi API that records registrations and never runs a tool,
 * command or handler, writes ONE JSON line `{nonce, kind, ...}` to fd 3 and exits. stdout and
 * stderr belong to the draft. Plain JavaScript: this file runs as it is from src/ and from the
 * package (Node 20 cannot strip types).
 */
import { closeSync, readSync, writeSync } from "node:fs";
import { pathToFileURL } from "node:url";

// Captured before any draft code runs: the draft shares this process and may replace globals.
const stringify = JSON.stringify;
const exitNow = process.exit.bind(process);
const isArray = Array.isArray;
const objectKeys = Object.keys;
const REPORT_FD = 3;
const NONCE_LENGTH = 32;

const draftPath = process.argv[2];
const L = JSON.parse(process.argv[3]);
const nonce = readNonce();

/** pi 0.73's events (ExtensionAPI.on); another name gets a warning, not an error. */
const PI_EVENTS = new Set([
	"resources_discover",
	"session_start",
	"session_before_switch",
	"session_before_fork",
	"session_before_compact",
	"session_compact",
	"session_shutdown",
	"session_before_tree",
	"session_tree",
	"context",
	"before_provider_request",
	"after_provider_response",
	"before_agent_start",
	"agent_start",
	"agent_end",
	"turn_start",
	"turn_end",
	"message_start",
	"message_update",
	"message_end",
	"tool_execution_start",
	"tool_execution_update",
	"tool_execution_end",
	"model_select",
	"thinking_level_select",
	"tool_call",
	"tool_result",
	"user_bash",
	"input",
]);

/** Exactly NONCE_LENGTH bytes from stdin, read before the draft can read them. */
function readNonce() {
	const buf = Buffer.alloc(NONCE_LENGTH);
	let got = 0;
	while (got < NONCE_LENGTH) {
		let n = 0;
		try {
			n = readSync(0, buf, got, NONCE_LENGTH - got, null);
		} catch (e) {
			if (e?.code === "EAGAIN") continue;
			throw e;
		}
		if (n === 0) break;
		got += n;
	}
	return buf.toString("utf8", 0, got);
}

let reported = false;

/** Write the one report and exit; later calls (a stray callback after the report) do nothing. */
function report(body) {
	if (reported) return;
	reported = true;
	let code = 0;
	try {
		const bytes = Buffer.from(`${stringify({ nonce, ...body })}\n`);
		let off = 0;
		while (off < bytes.length) {
			try {
				off += writeSync(REPORT_FD, bytes, off);
			} catch (e) {
				if (e?.code !== "EAGAIN") throw e;
			}
		}
		closeSync(REPORT_FD);
	} catch {
		code = 70; // the channel is gone (the draft closed fd 3): the parent sees an exit without a report
	}
	exitNow(code);
}

function text(v, max = L.text) {
	if (typeof v !== "string") return undefined;
	if (v.length <= max) return v;
	let end = max;
	const c = v.charCodeAt(end - 1);
	if (c >= 0xd800 && c <= 0xdbff) end--;
	return `${v.slice(0, end)}…`;
}

/**
 * A JSON copy of a schema within the character budget: functions, symbols and undefined dropped;
 * `{omitted}` when it is cyclic, too deep, too large or throws while being read.
 */
function boundedJson(value) {
	let budget = L.schemaChars;
	const ancestors = new Set();
	const walk = (v, depth) => {
		if (depth > L.schemaDepth) throw new Error(`nested deeper than ${L.schemaDepth} levels`);
		if (v === null || typeof v === "boolean") {
			budget -= 5;
			return v;
		}
		if (typeof v === "number") {
			budget -= 24;
			return Number.isFinite(v) ? v : null;
		}
		if (typeof v === "string") {
			budget -= v.length + 2;
			if (budget < 0) throw new Error(`larger than ${L.schemaChars} characters as JSON`);
			return v;
		}
		if (typeof v !== "object") return undefined;
		if (ancestors.has(v)) throw new Error("cyclic");
		ancestors.add(v);
		let out;
		if (isArray(v)) {
			out = [];
			for (let i = 0; i < v.length; i++) {
				budget -= 1;
				if (budget < 0) throw new Error(`larger than ${L.schemaChars} characters as JSON`);
				const x = walk(v[i], depth + 1);
				out.push(x === undefined ? null : x);
			}
		} else {
			out = {};
			for (const k of objectKeys(v)) {
				budget -= k.length + 4;
				if (budget < 0) throw new Error(`larger than ${L.schemaChars} characters as JSON`);
				const x = walk(v[k], depth + 1);
				if (x !== undefined) out[k] = x;
			}
		}
		ancestors.delete(v);
		if (budget < 0) throw new Error(`larger than ${L.schemaChars} characters as JSON`);
		return out;
	};
	try {
		return { parameters: walk(value, 0) };
	} catch (e) {
		return { parametersOmitted: text(e instanceof Error ? e.message : "unreadable") ?? "unreadable" };
	}
}

/** This file's frames in a stack are the harness, not the draft. */
const SELF = import.meta.url;

/**
 * Name, message, code and the draft's stack frames. Node puts the offending source line in front of
 * some stacks (a CommonJS syntax error): only its "file:line" header is kept, as `location`.
 */
function describeError(e) {
	try {
		if (e instanceof Error) {
			const lines = typeof e.stack === "string" ? e.stack.split("\n") : [];
			const frames = lines
				.filter((l) => /^\s+at /.test(l) && !l.includes("node:internal") && !l.includes(SELF))
				.slice(0, L.stackLines)
				.map((l) => text(l, L.stackLine));
			const header = /^(\S.*):(\d+)$/.exec(lines[0] ?? "");
			return {
				name: text(String(e.name), L.name) ?? "Error",
				message: text(String(e.message), L.message) ?? "",
				code: typeof e.code === "string" ? text(e.code, L.name) : undefined,
				location: header ? text(`${header[1]}:${header[2]}`) : undefined,
				stack: frames.length ? frames.join("\n") : undefined,
			};
		}
		return { name: "thrown value", message: text(String(e), L.message) ?? "" };
	} catch {
		return { name: "thrown value", message: "(the thrown value could not be described)" };
	}
}

/** The fake pi: registrations recorded within bounds; actions refused as pi refuses them while loading. */
function createRecorder() {
	const tools = new Map();
	const flags = new Map();
	const commands = new Map();
	const shortcuts = new Map();
	const events = new Map();
	const renderers = new Set();
	const providers = new Map();
	const bus = new Set();
	const warnings = [];
	let dropped = 0;
	let warningsDropped = 0;

	const warn = (w) => {
		if (warnings.length < L.warnings) warnings.push(text(w));
		else warningsDropped++;
	};
	/** A Map/Set keyed by name: a new key past the bound is counted, not kept. */
	const room = (coll, key) => {
		if (coll.has(key) || coll.size < L.items) return true;
		dropped++;
		return false;
	};
	const nameOf = (v, what) => {
		if (typeof v === "string" && v.length > 0) return text(v, L.name);
		warn(`${what} without a name (pi needs a non-empty string)`);
		return undefined;
	};
	const loading = (method) => () => {
		warn(
			`pi.${method}() was called while the extension loaded; pi refuses that too: call it from an event handler`,
		);
		throw new Error(
			"Extension runtime not initialized. Action methods cannot be called during extension loading.",
		);
	};

	const api = {
		on(event, handler) {
			const name = nameOf(event, "an event subscription");
			if (name === undefined) return;
			if (typeof handler !== "function") warn(`pi.on("${name}") without a handler function`);
			if (!PI_EVENTS.has(event)) warn(`pi.on("${name}"): pi 0.73 emits no event of that name`);
			if (room(events, name)) events.set(name, (events.get(name) ?? 0) + 1);
		},
		registerTool(tool) {
			const name = nameOf(tool.name, "a tool");
			if (name === undefined) return;
			if (tools.has(name)) warn(`tool "${name}" is registered twice; the last registration wins`);
			if (typeof tool.execute !== "function") warn(`tool "${name}" has no execute function`);
			for (const f of ["label", "description"]) {
				if (typeof tool[f] !== "string") warn(`tool "${name}" has no ${f} string`);
			}
			const p = tool.parameters;
			if (p === undefined) warn(`tool "${name}" has no parameters schema`);
			else if (p === null || typeof p !== "object" || p.type !== "object")
				warn(`tool "${name}": parameters should be an object schema (type "object")`);
			const functions = objectKeys(tool)
				.filter((k) => typeof tool[k] === "function")
				.slice(0, L.items)
				.map((k) => text(k, L.name));
			if (!room(tools, name)) return;
			tools.set(name, {
				name,
				label: text(tool.label),
				description: text(tool.description),
				promptSnippet: text(tool.promptSnippet),
				...(p === undefined ? {} : boundedJson(p)),
				functions,
			});
		},
		registerCommand(name, options) {
			const n = nameOf(name, "a command");
			if (n === undefined) return;
			if (n.startsWith("/")) warn(`command "${n}": give the name without the leading slash`);
			if (typeof options?.handler !== "function") warn(`command "${n}" has no handler function`);
			if (room(commands, n)) commands.set(n, { name: n, description: text(options?.description) });
		},
		registerShortcut(shortcut, options) {
			const key = nameOf(shortcut, "a shortcut");
			if (key === undefined) return;
			if (typeof options?.handler !== "function") warn(`shortcut "${key}" has no handler function`);
			if (room(shortcuts, key)) shortcuts.set(key, { key, description: text(options?.description) });
		},
		registerFlag(name, options) {
			const n = nameOf(name, "a flag");
			if (n === undefined) return;
			const type = options?.type;
			if (type !== "boolean" && type !== "string") warn(`flag "${n}": type must be "boolean" or "string"`);
			const d = options?.default;
			if (!room(flags, n)) return;
			flags.set(n, {
				name: n,
				type: text(typeof type === "string" ? type : undefined, L.name),
				description: text(options?.description),
				default: typeof d === "boolean" ? d : text(d),
				value: d,
			});
		},
		registerMessageRenderer(customType) {
			const n = nameOf(customType, "a message renderer");
			if (n !== undefined && room(renderers, n)) renderers.add(n);
		},
		getFlag(name) {
			return flags.get(name)?.value;
		},
		registerProvider(name, config) {
			const n = nameOf(name, "a provider");
			if (n === undefined || !room(providers, n)) return;
			const models = config?.models;
			providers.set(n, { name: n, models: isArray(models) ? models.length : undefined });
		},
		unregisterProvider(name) {
			providers.delete(name);
		},
		sendMessage: loading("sendMessage"),
		sendUserMessage: loading("sendUserMessage"),
		appendEntry: loading("appendEntry"),
		setSessionName: loading("setSessionName"),
		getSessionName: loading("getSessionName"),
		setLabel: loading("setLabel"),
		getActiveTools: loading("getActiveTools"),
		getAllTools: loading("getAllTools"),
		setActiveTools: loading("setActiveTools"),
		getCommands: loading("getCommands"),
		getThinkingLevel: loading("getThinkingLevel"),
		setThinkingLevel: loading("setThinkingLevel"),
		setModel() {
			warn("pi.setModel() was called while the extension loaded; pi refuses that too");
			return Promise.reject(new Error("Extension runtime not initialized"));
		},
		exec() {
			warn("pi.exec() was called while the extension loaded; the smoke test runs no commands");
			return Promise.reject(new Error("pi.exec is not available in keel's extension smoke test."));
		},
		events: {
			on(channel) {
				const n = nameOf(channel, "an event bus subscription");
				if (n !== undefined && room(bus, n)) bus.add(n);
				return () => {};
			},
			emit() {
				// Handlers never run in a smoke test.
			},
		},
	};

	const metadata = () => {
		if (warningsDropped > 0) warnings.push(`(${warningsDropped} more warnings)`);
		return {
			tools: [...tools.values()],
			flags: [...flags.values()].map(({ value: _value, ...f }) => f),
			commands: [...commands.values()],
			shortcuts: [...shortcuts.values()],
			events: [...events].map(([name, handlers]) => ({ name, handlers })),
			messageRenderers: [...renderers],
			providers: [...providers.values()],
			eventBus: [...bus],
			warnings,
			...(dropped > 0 ? { dropped } : {}),
		};
	};
	return { api, metadata };
}

// A failure outside the factory's promise (a timer, an unawaited promise) ends the run as an error,
// reported here instead of by Node (whose printout of an uncaught error quotes the source line).
process.on("uncaughtException", (e) => report({ kind: "error", phase: "async", error: describeError(e) }));
process.on("unhandledRejection", (e) => report({ kind: "error", phase: "async", error: describeError(e) }));
// The parent went away: nothing will read a report. (A busy draft is ended by its CPU-time limit.)
process.stdin.on("end", () => exitNow(71));
process.stdin.resume();
process.stdin.unref();

let mod;
try {
	mod = await import(pathToFileURL(draftPath).href);
} catch (e) {
	report({ kind: "error", phase: "import", error: describeError(e) });
}
if (!reported) {
	const factory = mod.default;
	if (typeof factory !== "function") {
		report({
			kind: "error",
			phase: "export",
			error: {
				name: "TypeError",
				message:
					"The draft has no default export function; a pi extension is `export default function (pi) { ... }`.",
			},
		});
	} else {
		const { api, metadata } = createRecorder();
		try {
			await factory(api);
			report({ kind: "ok", extension: metadata() });
		} catch (e) {
			report({ kind: "error", phase: "factory", error: describeError(e) });
		}
	}
}
