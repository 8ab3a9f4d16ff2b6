/**
 * `keel smoke-extension PATH`: loads a pi extension draft on this machine, within the roots the
 * options name, and prints the result in the contract's wire shape. Apart from cli.ts because it
 * is the one command that runs no keel session.
 */
import { resolve } from "node:path";
import { type SmokeResult, smokeTestExtension } from "../extensions/smoke.js";
import type { CliIO } from "./cli.js";
import type { Parsed } from "./cli-args.js";
import { UsageError } from "./cli-serve.js";

/** A smoke test in the contract's wire shape: its facts under details (ok) or error.details. */
function smokeToWire(r: SmokeResult): Record<string, unknown> {
	const { ok, kind, elapsedMs, ...facts } = r;
	if (r.ok) {
		const { summary, ...details } = facts as Omit<typeof r, "ok" | "kind" | "elapsedMs">;
		return { ok: true, content: summary, details: { kind, ...details }, elapsedMs };
	}
	const { error, ...details } = facts as Omit<typeof r, "ok" | "kind" | "elapsedMs">;
	return { ok, error: { ...error, details: { ...error.details, kind, ...details } }, elapsedMs };
}

export async function runSmoke(io: CliIO, p: Parsed): Promise<number> {
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
