/**
 * What the diagnostics files share: fresh workspaces (with a session on each) under one temp
 * directory per file, and the new errors and the one-line summary a result carries.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { DiagnosticsReport } from "../../src/diagnostics/diagnostics.js";
import { type CallResult, Session, type SessionOptions } from "../../src/session.js";

/** The test file's temp directory (made before its tests, removed after). */
export const scratch = { base: "" };
beforeAll(async () => {
	scratch.base = await mkdtemp(join(tmpdir(), "keel-diagnostics-"));
});
afterAll(async () => {
	if (scratch.base) await rm(scratch.base, { recursive: true, force: true });
});

let n = 0;
/** A fresh workspace with `files`, and a session on it. */
export async function workspace(files: Record<string, string>, opts: SessionOptions) {
	const root = join(scratch.base, `w${n++}`);
	for (const [path, text] of Object.entries(files)) {
		await mkdir(join(root, path, ".."), { recursive: true });
		await writeFile(join(root, path), text);
	}
	const session = await Session.create({ root, ...opts });
	return { root, session };
}

export const report = (r: CallResult): DiagnosticsReport | undefined =>
	r.ok ? (r.details as { diagnostics?: DiagnosticsReport } | undefined)?.diagnostics : undefined;
export const said = (r: CallResult) =>
	r.ok ? r.content.map((c) => ("text" in c ? c.text : "")).join("\n") : "";
export const diagnosticLines = (r: CallResult) =>
	said(r)
		.split("\n")
		.filter((l) => l.startsWith("Diagnostics:"));
/** Every new error as "path:line" and the message's first word. */
export const newErrors = (r: CallResult) =>
	(report(r)?.checkers ?? []).flatMap((c) =>
		c.files.flatMap((f) => f.errors.map((e) => `${f.path}:${e.line} ${e.message.split(/[\s:]/)[0]}`)),
	);
