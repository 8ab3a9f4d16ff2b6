/**
 * What the protected-set files share: real git, a snapshot of every file's bytes (a refused call
 * must leave it equal), sessions closed after each test, and a write through the tools as a model
 * would try it.
 */
import { execFileSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterEach, expect } from "vitest";
import { type CallResult, Session, type SessionOptions } from "../../src/session.js";

export function git(cwd: string, ...args: string[]): string {
	return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
		cwd,
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
		env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" },
	});
}

/** Every file below `dir` with its bytes: a refused call must leave it equal. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
	const out: Record<string, string> = {};
	for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
		if (!e.isFile()) continue;
		const p = join(e.parentPath, e.name);
		out[relative(dir, p)] = await readFile(p, "latin1");
	}
	return out;
}

function show(r: CallResult): string {
	return JSON.stringify(r.ok ? { ok: true } : { ok: false, error: r.error });
}

export function expectProtected(r: CallResult, path: string): void {
	expect(r.ok, `${path}: expected PATH_PROTECTED, got ${show(r)}`).toBe(false);
	if (!r.ok) expect(r.error.code, `${path}: ${show(r)}`).toBe("PATH_PROTECTED");
}

export function expectOk(r: CallResult, path: string): void {
	expect(r.ok, `${path}: expected ok, got ${show(r)}`).toBe(true);
}

const sessions: Session[] = [];
afterEach(async () => {
	await Promise.all(sessions.splice(0).map((s) => s.close()));
});

/** A unified-profile session on `root` (home beside it unless given), closed after the test. */
export async function open(root: string, opts: SessionOptions = {}): Promise<Session> {
	const s = await Session.create({ root, home: join(root, "..", "nohome"), profile: "unified", ...opts });
	sessions.push(s);
	return s;
}

/** Writes `path` with the file tool, after a read (which replacing an existing file needs). */
export async function writeThrough(s: Session, path: string, content = "echo PWNED\n"): Promise<CallResult> {
	await s.call("read", { path });
	return s.call("file", { queries: [{ type: "write", path, content }] });
}
