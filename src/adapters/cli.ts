/**
 * The CLI (DESIGN "The CLI contract"; keep it stable):
 *   keel call TOOL 'JSON_ARGS' [options]   one call, one JSON object on stdout
 *   keel batch [options]                   one session over JSONL on stdin
 *   keel smoke-extension PATH [options]    a pi extension draft in a disposable child (R7)
 * Exit 0 when ok, 1 on a tool error, 2 on a usage error.
 */
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { KeelError } from "../boundary/errors.js";
import { type SmokeResult, smokeTestExtension } from "../extensions/smoke.js";
import { type CallResult, Session, type SessionOptions } from "../session.js";
import type { Content } from "../tools/types.js";
import { type Parsed, parse, USAGE } from "./cli-args.js";
import { UsageError } from "./cli-serve.js";

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

function usageFailure(
	io: CliIO,
	message: string,
	code: "INVALID_ARGS" | "UNKNOWN_TOOL" = "INVALID_ARGS",
): number {
	io.stdout(JSON.stringify({ ok: false, error: new KeelError(code, message).toJSON() }));
	return 2;
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
		// A multi-file change a killed keel left half done was finished before anything else (M11).
		for (const r of session.recovery) {
			const left = r.unresolved.map((u) => `${u.path} (${u.state})`).join("; ");
			io.stderr(
				`keel: recovered an interrupted multi-file change: ${r.outcome}${r.restored.length ? `, restored ${r.restored.join(", ")}` : ""}${left ? `; not restored: ${left}; previous bytes kept in ${r.record}` : ""}`,
			);
		}
		return session;
	} catch (e) {
		const msg = e instanceof Error ? e.message : String(e);
		io.stderr(`keel: ${msg}`);
		return usageFailure(io, msg);
	}
}

async function runCall(io: CliIO, p: Parsed): Promise<number> {
	const [tool, json, ...rest] = p.positionals;
	if (!tool) throw new UsageError("call needs a tool name");
	if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}"`);
	let args: unknown;
	try {
		args = JSON.parse(json ?? "{}");
	} catch (e) {
		return usageFailure(io, `JSON_ARGS is not valid JSON: ${(e as Error).message}`);
	}
	const session = await openSession(io, p);
	if (typeof session === "number") return session;
	const controller = new AbortController();
	const onSigint = () => controller.abort();
	process.once("SIGINT", onSigint);
	try {
		if (!session.tools.some((t) => t.name === tool)) {
			return usageFailure(
				io,
				`Unknown tool "${tool}". Available: ${session.tools.map((t) => t.name).join(", ")}.`,
				"UNKNOWN_TOOL",
			);
		}
		const result = await session.call(tool, args, { signal: controller.signal });
		io.stdout(JSON.stringify(toWire(result)));
		return result.ok ? 0 : 1;
	} finally {
		process.off("SIGINT", onSigint);
		await session.close();
	}
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

/** A smoke test in the contract's wire shape: its facts under details (ok) or error.details. */
export function smokeToWire(r: SmokeResult): Record<string, unknown> {
	const { ok, kind, elapsedMs, ...facts } = r;
	if (r.ok) {
		const { summary, ...details } = facts as Omit<typeof r, "ok" | "kind" | "elapsedMs">;
		return { ok: true, content: summary, details: { kind, ...details }, elapsedMs };
	}
	const { error, ...details } = facts as Omit<typeof r, "ok" | "kind" | "elapsedMs">;
	return { ok, error: { ...error, details: { ...error.details, kind, ...details } }, elapsedMs };
}

async function runSmoke(io: CliIO, p: Parsed): Promise<number> {
	const [path, ...rest] = p.positionals;
	if (!path) throw new UsageError("smoke-extension needs the draft's path");
	if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}"`);
	if (p.backend.open)
		throw new UsageError("smoke-extension runs drafts on this machine; --backend does not apply");
	const root = resolve(p.session.root ?? process.cwd());
	const roots = [
		root,
		...[...(p.session.allow ?? []), ...(p.session.allowRead ?? [])].map((r) => resolve(root, r)),
	];
	const controller = new AbortController();
	const onSigint = () => controller.abort();
	process.once("SIGINT", onSigint);
	try {
		const result = await smokeTestExtension(path, {
			roots,
			timeoutMs: p.timeoutMs,
			signal: controller.signal,
		});
		io.stdout(JSON.stringify(smokeToWire(result)));
		return result.ok ? 0 : 1;
	} finally {
		process.off("SIGINT", onSigint);
	}
}

export async function main(argv: string[], io: CliIO): Promise<number> {
	try {
		// pi's own flags (-p, --mode, ...) pass through untouched, so `agent` skips keel's parser.
		if (argv[0] === "agent") {
			const { runAgent } = await import("./pi/launcher.js");
			return await runAgent(argv.slice(1), { stderr: io.stderr });
		}
		const p = parse(argv, io.env ?? process.env);
		switch (p.command) {
			case "call":
				return await runCall(io, p);
			case "batch":
				return await runBatch(io, p);
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
		if (e instanceof UsageError) {
			if (!e.message) {
				io.stdout(USAGE);
				return 0;
			}
			io.stderr(`keel: ${e.message}`);
			io.stderr(USAGE);
			return usageFailure(io, `Usage error: ${e.message}.`);
		}
		throw e;
	}
}
