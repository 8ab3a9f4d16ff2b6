/**
 * keel as a pi extension: `pi -e <this file>`, `pi install npm:keel`, or the
 * extensions list in pi's settings.
 *
 * Every keel tool is registered, overriding pi's built-ins of the same names; the profile
 * (`pi`: pi's seven names; `unified`: read, file, bash, grep, find, ls and python) and the
 * disabled names decide which stay active. That policy is applied on every session_start (startup,
 * reload, new, resume, fork) and again before each agent run, so no reset brings a disabled tool
 * back. One keel Session per pi session, opened on the first tool call and closed on shutdown.
 *
 * Where the tools run is keel's backend (--keel-backend local|bwrap|ssh://user@host[:port]/path,
 * KEEL_BACKEND, or "backend" in pi's global settings.json; config.ts): this machine, a bubblewrap
 * sandbox, or a remote host. It covers keel's tools only: pi's own `!command` shell and other
 * extensions' tools still run on this machine. A backend setting that does not parse is shown as a
 * warning and then refuses every keel tool call; keel never falls back to this machine for it. So
 * does any other setting keel cannot use (an unknown profile or tool name): no typo widens the palette.
 *
 * pi is imported for types only: at run time this module needs nothing from pi, and its public
 * declaration names only keel's own PiExtensionHost, so a consumer compiles it without pi installed.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { FLAG_HELP, FLAGS, type FlagKey, type KeelPiConfig, SWITCHES } from "./config.js";
import { loadConfig } from "./load-config.js";
import { allKeelTools, applyPolicy, suppressedNames } from "./policy.js";
import { SessionSlot } from "./sessions.js";
import { FailureLog, toPiTool } from "./tools.js";
import { undoCommand } from "./undo.js";

/**
 * The part of pi's ExtensionAPI keel calls, declared here so that keel's published types need
 * nothing from pi; pi's ExtensionAPI fits it.
 */
export interface PiExtensionHost {
	/** Declare a command-line flag (keel's --keel-* options). */
	registerFlag(name: string, options: { description?: string; type: "boolean" | "string" }): void;
	/** A flag's value. */
	getFlag(name: string): unknown;
	/** Offer a tool to the model. */
	registerTool(tool: never): void;
	/** Listen to a session event. */
	on(event: never, handler: never): void;
	/** The names of the tools the model is offered now. */
	getActiveTools(): string[];
	/** Set the tools the model is offered. */
	setActiveTools(names: string[]): void;
	/** Every registered tool. */
	getAllTools(): { name: string }[];
	/** Add a slash command (keel's /keel-undo). */
	registerCommand?(
		name: string,
		options: { description?: string; handler: (args: string, ctx: never) => unknown },
	): void;
}

/** pi's extension entry: registers keel's tools in place of pi's built-in ones, and keel's flags and commands. */
export default function keel(piHost: PiExtensionHost): void {
	const pi = piHost as unknown as ExtensionAPI;
	for (const [key, name] of Object.entries(FLAGS) as [FlagKey, string][]) {
		pi.registerFlag(name, { description: FLAG_HELP[key], type: SWITCHES.has(key) ? "boolean" : "string" });
	}

	// All state lives in this closure: one set per extension instance, i.e. per pi session.
	const slot = new SessionSlot();
	const failures = new FailureLog();
	let config: { cwd: string; value: KeelPiConfig } | undefined;

	const configFor = (ctx: ExtensionContext): KeelPiConfig => {
		if (config?.cwd !== ctx.cwd) {
			// pi's other tools (its built-ins, other extensions') are names --keel-disable may turn off.
			const others = typeof pi.getAllTools === "function" ? pi.getAllTools().map((t) => t.name) : [];
			const value = loadConfig(ctx.cwd, (name) => pi.getFlag(name), process.env, others);
			config = { cwd: ctx.cwd, value };
			for (const w of value.warnings) {
				if (ctx.hasUI) ctx.ui.notify(`keel: ${w}`, "warning");
				else console.error(`keel: ${w}`);
			}
		}
		return config.value;
	};

	const enforce = (ctx: ExtensionContext) => {
		const c = configFor(ctx);
		const next = applyPolicy(pi.getActiveTools(), suppressedNames(c.profile, c.disabled));
		if (next) pi.setActiveTools(next);
	};

	const host = {
		failures,
		session(ctx: ExtensionContext) {
			const c = configFor(ctx);
			return slot.get({
				root: c.root,
				profile: c.profile,
				allow: c.allow,
				allowRead: c.allowRead,
				disabledTools: c.disabled.filter((n) => keelNames.has(n)),
				settingsError: c.error,
				backendSetting: c.backend,
				commandPrefix: c.commandPrefix,
				...(c.checkpoints ? { checkpoints: true } : {}),
				...(c.diagnostics.length ? { diagnostics: c.diagnostics } : {}),
			});
		},
	};
	const keelNames = new Set(allKeelTools().map((t) => t.name));
	for (const def of allKeelTools()) pi.registerTool(toPiTool(def, host));

	// `/undo [N | list]`: the checkpoints of keel's own changes (--keel-checkpoints turns them on).
	pi.registerCommand?.("undo", {
		description:
			"keel: undo the last change keel's tools made (bash included), restore checkpoint N, or list them",
		handler: async (args: string, ctx: ExtensionContext) => {
			const say = (text: string, level: "info" | "warning" | "error" = "info") =>
				ctx.hasUI ? ctx.ui.notify(text, level) : console.log(text);
			say(...(await undoCommand(await host.session(ctx), args)));
		},
	});

	pi.on("session_start", (_event, ctx) => {
		config = undefined; // flags and settings are read afresh for every session
		enforce(ctx);
	});
	pi.on("before_agent_start", (_event, ctx) => {
		enforce(ctx);
	});
	pi.on("tool_result", (event) => {
		const f = failures.take(event.toolCallId);
		if (!f || !event.isError) return;
		return { details: { error: f.error, elapsedMs: f.elapsedMs } };
	});
	// A failure's directive reaches the model in the failing tool's result text (errorText); the
	// end of the turn that produced it expires it in the session's failure memory.
	pi.on("turn_end", async () => {
		(await slot.opened())?.failures.endTurn();
	});
	pi.on("session_shutdown", async () => {
		await slot.close();
	});
}
