import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject } from "vitest";
import type { Backend } from "../../src/backend/types.js";
import type { ErrorCode } from "../../src/boundary/errors.js";
import { type CallResult, Session, type SessionOptions } from "../../src/session.js";
import { type BackendFactory, type ContractBackend, contractBackends } from "./backends.js";

export const SECRET = "TOPSECRET";

export interface Scratch {
	scratch: string;
	root: string;
	outside: string;
	made: ContractBackend;
	/** A session on the backend (closed by dispose); `backend` overrides the factory's (a wrapper). */
	open(
		opts?: Omit<SessionOptions, "root" | "spillDir" | "backend"> & { backend?: Backend },
	): Promise<Session>;
	dispose(): Promise<void>;
}

export async function makeScratch(factory: BackendFactory): Promise<Scratch> {
	const scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-contract-")));
	const root = join(scratch, "root");
	const outside = join(scratch, "outside");
	await Promise.all([mkdir(root), mkdir(outside), mkdir(join(scratch, "spill"), { mode: 0o700 })]);
	const made = await factory.create(root);
	const sessions: Session[] = [];
	return {
		scratch,
		root,
		outside,
		made,
		async open(opts = {}) {
			const s = await Session.create({
				backend: made.backend,
				...opts,
				root,
				spillDir: join(scratch, "spill"),
			});
			sessions.push(s);
			return s;
		},
		async dispose() {
			// Sessions share the factory's backend and each closes it: close() must be idempotent.
			for (const s of sessions) await s.close();
			await made.backend.close();
			await made.cleanup();
			await rm(scratch, { recursive: true, force: true });
		},
	};
}

export function show(r: CallResult): string {
	return JSON.stringify(r.ok ? { ok: true, content: r.content } : { ok: false, error: r.error }).slice(
		0,
		2000,
	);
}

export function textOf(r: CallResult): string {
	if (!r.ok) return "";
	return r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

export function expectOk(r: CallResult): string {
	expect(r.ok, `expected ok, got ${show(r)}`).toBe(true);
	return textOf(r);
}

export function expectCode(r: CallResult, ...codes: ErrorCode[]): void {
	expect(r.ok, `expected ${codes.join(" | ")}, got ${show(r)}`).toBe(false);
	if (r.ok) return;
	expect(codes, `unexpected error: ${show(r)}`).toContain(r.error.code);
	expect(JSON.stringify(r.error)).not.toContain(SECRET);
}

export function sha256(data: Uint8Array): string {
	return createHash("sha256").update(data).digest("hex");
}

/** keel temp files anywhere under `dir` (a failed commit must leave none). */
export async function tempFiles(dir: string): Promise<string[]> {
	const names = await readdir(dir, { recursive: true });
	return names.filter((n) => n.split("/").pop()!.startsWith(".keel-tmp-"));
}

export { processesWith, waitFor } from "../fixtures/processes.js";

/** A shell word for a command line. */
export function q(s: string): string {
	return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Declare the same tests for every backend of this run (contractBackends: local in the fast tier,
 * all of BACKENDS with the `backends` suite): one describe per backend, skipped with the reason
 * when it is unavailable, a fresh scratch area per test.
 */
export function forEachBackend(body: (x: () => Scratch) => void): void {
	for (const [factory, avail] of availability) {
		const reason = avail === true ? undefined : avail === false ? "unavailable here" : avail;
		const title = `${factory.name}${reason ? ` (skipped: ${reason})` : ""}`;
		describe.skipIf(reason !== undefined)(title, { timeout: factory.testTimeoutMs }, () => {
			beforeAll(async () => {
				await factory.setup?.();
			}, 60_000);
			afterAll(async () => {
				await factory.teardown?.();
			});
			let current: Scratch | undefined;
			beforeEach(async () => {
				current = await makeScratch(factory);
			});
			afterEach(async () => {
				await current?.dispose();
				current = undefined;
			});
			body(() => {
				if (!current) throw new Error("no scratch area");
				return current;
			});
		});
	}
}

const availability = await Promise.all(
	contractBackends(inject("keelSuites")).map(async (f) => [f, await f.available()] as const),
);
