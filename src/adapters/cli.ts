/**
 * The CLI (keep it stable; cli-help.ts has the text):
 *   keel call TOOL 'JSON_ARGS'|- [options] one call, one JSON object on stdout
 *   keel batch [options]                   one session over JSONL on stdin
 *   keel tools [--profile P] [--json]      a profile's tools, descriptions and schemas
 *   keel serve / agent / smoke-extension   MCP server, pi with keel's tools, a pi extension draft
 *   keel help [COMMAND], keel --version
 * Exit 0 when ok, 1 on a tool error, 2 on a usage error, for every command.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { KeelError } from "../boundary/errors.js";
import { type CallResult, Session, type SessionOptions } from "../session.js";
import { paletteFor } from "../session-options.js";
import type { Content } from "../tools/types.js";
import { type Parsed, parse } from "./cli-args.js";
import { COMMAND_HELP, EXIT, OVERVIEW, toolsJson, toolsText, usageLine } from "./cli-help.js";
import { UsageError } from "./cli-serve.js";
import { runSmoke } from "./cli-smoke.js";

export { UsageError };

export interface CliIO {
	stdout: (line: string) => void;
	stderr: (line: string) => void;
	stdin: NodeJS.ReadableStream;
	/** Where the KEEL_* settings are read (default: process.env). */
	env?: Record<string, string | undefined>;
}

function joinText(content: Content[]): string {
	return content
		.filter((c) => c.type === "text")
		.map((c) => (c as { text: string }).text)
		.join("\n");
}

/** The contract's wire shape for one call. */
export function toWire(r: CallResult): Record<string, unknown> {
	if (!r.ok) return { ok: false, error: r.error, elapsedMs: r.elapsedMs };
	const out: Record<string, unknown> = { ok: true, content: joinText(r.content) };
	const images = r.content.filter((c) => c.type === "image");
	if (images.length) out.images = images;
	if (r.details !== undefined) out.details = r.details;
	out.elapsedMs = r.elapsedMs;
	return out;
}

/** A usage error: one line on stderr naming the help to read, and the JSON error on stdout. */
function usageFailure(
	io: CliIO,
	message: string,
	command: string | undefined,
	code: "INVALID_ARGS" | "UNKNOWN_TOOL" = "INVALID_ARGS",
): number {
	io.stderr(usageLine(message, command));
	io.stdout(JSON.stringify({ ok: false, error: new KeelError(code, `Usage error: ${message}.`).toJSON() }));
	return EXIT.usage;
}

/** Session options with the chosen backend opened; a backend that cannot start is a tool error (exit 1). */
async function withBackend(io: CliIO, p: Parsed): Promise<SessionOptions | number> {
	if (!p.backend.open) return p.session;
	const root = resolve(p.session.root ?? process.cwd());
	try {
		const backend = await p.backend.open(root, p.session.allow ?? [], p.session.allowRead ?? [], {
			allowProtected: p.session.allowProtected,
			protectedPaths: p.session.protectedPaths,
		});
		// `~` means the remote home on a remote backend.
		const home =
			"remoteHome" in backend ? await (backend as { remoteHome(): Promise<string> }).remoteHome() : undefined;
		return { ...p.session, root, backend, ...(home ? { home } : {}) };
	} catch (e) {
		const err =
			e instanceof KeelError
				? e
				: new KeelError("BACKEND_UNAVAILABLE", e instanceof Error ? e.message : String(e));
		io.stderr(`keel: ${err.message}`);
		io.stdout(JSON.stringify({ ok: false, error: err.toJSON() }));
		return 1;
	}
}

async function openSession(io: CliIO, p: Parsed): Promise<Session | number> {
	const opts = await withBackend(io, p);
	if (typeof opts === "number") return opts;
	try {
		const session = await Session.create(opts);
		// A multi-file change a killed keel left half done was finished before anything else.
		for (const r of session.recovery) io.stderr(r.line);
		return session;
	} catch (e) {
		return usageFailure(io, e instanceof Error ? e.message : String(e), p.command);
	}
}

/** All of a stream as text (`keel call TOOL -`). */
async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
	const chunks: Buffer[] = [];
	for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
	return Buffer.concat(chunks).toString("utf8");
}

/** Errors a single `call` always meets when it changes a file it would have to read first. */
const NEEDS_A_READ: ReadonlySet<string> = new Set(["NOT_READ", "STALE_READ", "WRITE_COLLISION"]);

/**
 * A failure of one `keel call` explained for its session: each call is a new session that has read
 * nothing, so retrying the same call can never succeed; a batch can read and then change.
 */
function forOneCall(result: CallResult, tool: string): CallResult {
	if (result.ok || !NEEDS_A_READ.has(result.error.code)) return result;
	const hint =
		` Each "keel call" is a new session that has read nothing, so this ${tool} can never succeed on its own: ` +
		`send the read and the change as lines of one "keel batch" (printf '%s\\n' '{"tool":"read","args":{...}}' '{"tool":"${tool}","args":{...}}' | keel batch).`;
	const { directive: _stale, ...error } = result.error;
	return { ...result, error: { ...error, message: result.error.message + hint, retry: "change-approach" } };
}

async function runCall(io: CliIO, p: Parsed): Promise<number> {
	const [tool, json, ...rest] = p.positionals;
	if (!tool) throw new UsageError("call needs a tool name");
	if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}"`);
	let args: unknown;
	try {
		args = JSON.parse(json === "-" ? await readAll(io.stdin) : (json ?? "{}"));
	} catch (e) {
		return usageFailure(
			io,
			`${json === "-" ? "stdin" : "JSON_ARGS"} is not valid JSON: ${(e as Error).message}`,
			"call",
		);
	}
	// Checked before a session (and its backend) opens: a misspelt tool costs nothing.
	const palette = paletteFor(p.session).map((t) => t.name);
	if (!palette.includes(tool))
		return usageFailure(
			io,
			`unknown tool "${tool}" in the ${p.session.profile} profile; its tools: ${palette.join(", ")}`,
			"tools",
			"UNKNOWN_TOOL",
		);
	const session = await openSession(io, p);
	if (typeof session === "number") return session;
	const controller = new AbortController();
	const onSigint = () => controller.abort();
	process.once("SIGINT", onSigint);
	try {
		const result = forOneCall(await session.call(tool, args, { signal: controller.signal }), tool);
		io.stdout(JSON.stringify(toWire(result)));
		return result.ok ? EXIT.ok : EXIT.failed;
	} finally {
		process.off("SIGINT", onSigint);
		await session.close();
	}
}

/** `keel tools`: the palette a session with these options would offer; no session is opened. */
function runTools(io: CliIO, p: Parsed): number {
	if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
	const tools = paletteFor({ profile: p.session.profile, disabledTools: p.session.disabledTools });
	io.stdout(p.json ? toolsJson(tools) : toolsText(tools));
	return EXIT.ok;
}

async function runBatch(io: CliIO, p: Parsed): Promise<number> {
	if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
	const session = await openSession(io, p);
	if (typeof session === "number") return session;
	let failures = 0;
	try {
		const lines = createInterface({ input: io.stdin, crlfDelay: Number.POSITIVE_INFINITY });
		for await (const line of lines) {
			if (line.trim() === "") continue;
			let req: { tool?: unknown; args?: unknown };
			try {
				req = JSON.parse(line);
			} catch (e) {
				failures++;
				io.stdout(
					JSON.stringify({
						ok: false,
						error: new KeelError("INVALID_ARGS", `Line is not valid JSON: ${(e as Error).message}`).toJSON(),
					}),
				);
				continue;
			}
			if (!req || typeof req !== "object" || typeof req.tool !== "string") {
				failures++;
				io.stdout(
					JSON.stringify({
						ok: false,
						error: new KeelError("INVALID_ARGS", 'Each line must be {"tool": NAME, "args": {...}}.').toJSON(),
					}),
				);
				continue;
			}
			const result = await session.call(req.tool, req.args ?? {});
			if (!result.ok) failures++;
			io.stdout(JSON.stringify(toWire(result)));
		}
	} finally {
		await session.close();
	}
	return failures > 0 ? 1 : 0;
}

/** keel's version, from its package.json (two levels up from src/adapters and dist/adapters). */
export function version(): string {
	const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
		version: string;
	};
	return pkg.version;
}

function runHelp(io: CliIO, topic: string | undefined): number {
	if (topic === undefined) {
		io.stdout(OVERVIEW);
		return EXIT.ok;
	}
	const text = COMMAND_HELP[topic];
	if (!text)
		throw new UsageError(`no help for "${topic}" (commands: ${Object.keys(COMMAND_HELP).join(", ")})`);
	io.stdout(text);
	return EXIT.ok;
}

export async function main(argv: string[], io: CliIO): Promise<number> {
	const command = argv[0];
	try {
		// pi's own flags (-p, --mode, ...) pass through untouched, so `agent` skips keel's parser.
		if (command === "agent") {
			const { runAgent } = await import("./pi/launcher.js");
			return await runAgent(argv.slice(1), { stderr: io.stderr });
		}
		if (command === "--version" || command === "-v" || command === "version") {
			io.stdout(version());
			return EXIT.ok;
		}
		if (command === "help") return runHelp(io, argv[1]);
		const options = argv.indexOf("--");
		const flags = options === -1 ? argv : argv.slice(0, options);
		if (flags.includes("--help") || flags.includes("-h"))
			return runHelp(io, command && command in COMMAND_HELP ? command : undefined);
		const p = parse(argv, io.env ?? process.env);
		switch (p.command) {
			case "call":
				return await runCall(io, p);
			case "batch":
				return await runBatch(io, p);
			case "tools":
				return runTools(io, p);
			case "smoke-extension":
				return await runSmoke(io, p);
			case "serve": {
				if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
				// Loaded on demand: the MCP SDK takes ~0.6 s to import, which `keel call` must not pay.
				const { runServe } = await import("./mcp/serve.js");
				const opts = await withBackend(io, p);
				if (typeof opts === "number") return opts;
				return await runServe(opts, { ...p.serve, http: p.http, host: p.host }, { stderr: io.stderr });
			}
			default:
				throw new UsageError(`unknown command "${p.command}"`);
		}
	} catch (e) {
		if (e instanceof UsageError)
			return usageFailure(io, e.message, command && command in COMMAND_HELP ? command : undefined);
		throw e;
	}
}
