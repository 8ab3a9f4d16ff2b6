/**
 * A refusal names only the path the model gave: never where a link leads outside the roots (a
 * secret file name, the host's working directory through /proc/self/cwd, a descriptor's file
 * through /proc/self/fd/N). Every path-taking tool, on local and, when it can run here, bwrap.
 */
import { randomBytes } from "node:crypto";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import type { Backend } from "../../src/backend/types.js";
import { bwrapAvailable } from "../contract/backends.js";
import { useWorkspace } from "../fixtures/workspace.js";

const SECRET_NAME = `secret-name-${randomBytes(6).toString("hex")}`;

// Each test plants its link, then opens its session on the backend it checks.
const ws = useWorkspace({ prefix: "keel-refusal-", session: false });
/** The secrets, beside the workspace root. */
const outside = (rel: string) => ws().outside(join("outside", rel));
beforeEach(async () => {
	await mkdir(outside(SECRET_NAME), { recursive: true });
	await writeFile(outside(`${SECRET_NAME}/f.txt`), "x\n");
	await writeFile(outside(`${SECRET_NAME}.txt`), "x\n");
});

/** Links planted in the workspace, each leading outside; what its target would reveal. */
const LINKS: Array<{ name: string; target: () => string; through: string }> = [
	{ name: "to a secret file", target: () => outside(`${SECRET_NAME}.txt`), through: "file.txt" },
	{ name: "to a secret directory", target: () => outside(SECRET_NAME), through: "f.txt" },
	{ name: "dangling, to a secret name", target: () => outside(`${SECRET_NAME}-gone`), through: "x" },
	{ name: "relative, to a secret name", target: () => `../outside/${SECRET_NAME}`, through: "f.txt" },
	{ name: "to /proc/self/cwd", target: () => "/proc/self/cwd", through: "package.json" },
	{ name: "to /proc/self/fd/0", target: () => "/proc/self/fd/0", through: "" },
	{ name: "to /proc/self/exe", target: () => "/proc/self/exe", through: "" },
	{ name: "to /proc/self/root/etc", target: () => "/proc/self/root/etc", through: "passwd" },
];

const CALLS: Array<[tool: string, args: (path: string) => Record<string, unknown>]> = [
	["read", (path) => ({ path })],
	["write", (path) => ({ path, content: "x\n" })],
	["edit", (path) => ({ path, edits: [{ oldText: "x", newText: "y" }] })],
	["ls", (path) => ({ path })],
	["find", (path) => ({ pattern: "*", path })],
	["grep", (path) => ({ pattern: "x", path })],
];

/** Every absolute path in `message` is the workspace or below it (the paths given are relative). */
function expectOnlyGivenPaths(message: string): void {
	for (const m of message.matchAll(/(?<=^|[\s(:"'`])\/[^\s;,()'"`]+/g)) {
		const p = m[0].replace(/[.:]+$/, "");
		expect(p === ws().root || p.startsWith(`${ws().root}/`), `"${p}" in: ${message}`).toBe(true);
	}
	expect(message).not.toContain(SECRET_NAME);
	expect(message).not.toContain(process.cwd());
}

const sandboxed = await bwrapAvailable();
const BACKENDS: Array<[string, (() => Backend) | undefined]> = [
	["local", undefined],
	["bwrap", sandboxed === true ? () => createBwrapBackend({ roots: [ws().root] }) : undefined],
];

describe.each(BACKENDS)("%s: refusals name only the given path", (kind, backend) => {
	if (kind === "bwrap" && sandboxed !== true) {
		it.skip(`bwrap: ${sandboxed}`, () => {});
		return;
	}
	it.each(LINKS)("a link $name", async ({ target, through }) => {
		await symlink(target(), ws().path("l"));
		const s = await ws().open({ home: ws().outside("home"), backend: backend?.() });
		for (const given of ["l", through ? `l/${through}` : "l"]) {
			for (const [tool, args] of CALLS) {
				const r = await s.call(tool, args(given));
				if (r.ok) continue; // a listing of the workspace itself, say; its content is tested elsewhere
				expectOnlyGivenPaths(r.error.message);
				expectOnlyGivenPaths(JSON.stringify(r.error));
			}
		}
	});
});
