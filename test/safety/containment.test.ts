/**
 * Listings reveal nothing outside the roots, the temp sweep removes only keel's
 * own temp files (item 4), and the pinned handles are all closed (item 1). Through the tools.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chown, mkdir, readdir, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import { createLocalTools } from "../../src/backend/search/local-runner.js";
import type { CallResult } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

const SECRET = "SECRETBYTES";
const SECRET_NAME = "secret-name.txt";
const tools = await createLocalTools().detect();
const HAS_NATIVE = tools.rg !== undefined && tools.fd !== undefined;

// Each test opens its sessions itself; the link targets lie beside the root.
const ws = useWorkspace({ prefix: "keel-contain-", session: false });
let elsewhere: string;

beforeEach(async () => {
	elsewhere = ws().outside("elsewhere");
	await mkdir(ws().path("inner"), { recursive: true });
	await mkdir(join(elsewhere, "deep"), { recursive: true });
	await writeFile(join(elsewhere, SECRET_NAME), `${SECRET}\n`);
	await writeFile(join(elsewhere, "deep", SECRET_NAME), `${SECRET}\n`);
	await writeFile(ws().path("inner/ok.txt"), "needle inside\n");
	await symlink(elsewhere, ws().path("out-dir"));
	await symlink(join(elsewhere, SECRET_NAME), ws().path("out-file"));
	await symlink("inner", ws().path("in-dir"));
	await symlink(ws().outside("missing"), ws().path("dangling"));
});

const text = (r: CallResult) => JSON.stringify(r);
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!;

describe("listings reveal nothing outside the roots", () => {
	it("ls lists a link to an outside directory as a plain name; a link inside as a directory", async () => {
		const s = await ws().open();
		const r = await s.call("ls", {});
		expect(r.ok).toBe(true);
		const lines = (r.ok && r.content[0].type === "text" ? r.content[0].text : "").split("\n");
		expect(lines).toContain("out-dir");
		expect(lines).not.toContain("out-dir/");
		expect(lines).toContain("in-dir/");
		expect(lines).toContain("out-file");
		expect(lines).toContain("dangling");
		await s.close();
	});

	for (const engine of ["native", "js"] as const) {
		const skip = engine === "native" && !HAS_NATIVE;
		it.skipIf(skip)(
			`find and grep (${engine}${skip ? ", skipped: rg/fd not on PATH" : ""}) never descend into outside targets`,
			async () => {
				const s = await ws().open({
					backend: createLocalBackend({ searchEngine: engine }),
				});
				const found = await s.call("find", { pattern: "*" });
				expect(found.ok).toBe(true);
				expect(text(found)).not.toContain(SECRET_NAME);
				expect(text(found)).not.toMatch(/out-dir\//);
				const deep = await s.call("find", { pattern: "**/secret*" });
				expect(text(deep)).not.toContain(SECRET_NAME);
				for (const pattern of [SECRET, "needle"]) {
					const g = await s.call("grep", { pattern });
					expect(text(g)).not.toContain(SECRET);
					expect(text(g)).not.toContain(SECRET_NAME);
				}
				const g = await s.call("grep", { pattern: "needle" });
				expect(text(g)).toContain("inner/ok.txt");
				await s.close();
			},
		);
	}
});

describe("the temp sweep at session start removes only keel's own temp files", () => {
	it("keeps a user's look-alike file, a directory, a FIFO and another user's file; removes a real leftover", async () => {
		const pid = deadPid();
		const leftover = `.keel-tmp-${pid}-0123456789ab-f.txt`;
		const lookalike = ".keel-tmp-99999999-notes.txt";
		const dirLike = `.keel-tmp-${pid}-aaaaaaaaaaaa-dir`;
		const fifoLike = `.keel-tmp-${pid}-bbbbbbbbbbbb-fifo`;
		const othersLike = `.keel-tmp-${pid}-cccccccccccc-other.txt`;
		await writeFile(ws().path(leftover), "half-written\n");
		await writeFile(ws().path(lookalike), "my notes\n");
		await mkdir(ws().path(dirLike));
		await writeFile(join(ws().root, dirLike, "kept.txt"), "kept\n");
		execFileSync("mkfifo", [ws().path(fifoLike)]);
		await writeFile(ws().path(othersLike), "someone else's\n");
		const asRoot = process.getuid?.() === 0;
		if (asRoot) await chown(ws().path(othersLike), 65534, 65534);
		const s = await ws().open();
		const names = await readdir(ws().root);
		expect(names).not.toContain(leftover);
		expect(names).toContain(lookalike);
		expect(names).toContain(dirLike);
		expect((await stat(join(ws().root, dirLike, "kept.txt"))).isFile()).toBe(true);
		expect(names).toContain(fifoLike);
		if (asRoot) expect(names).toContain(othersLike);
		// The session works after the sweep.
		expect((await s.call("read", { path: lookalike })).ok).toBe(true);
		await s.close();
	});

	it("a live writer's temp file is kept", async () => {
		const live = `.keel-tmp-${process.ppid}-0123456789ab-f.txt`;
		await writeFile(ws().path(live), "in progress\n");
		const s = await ws().open();
		expect(await readdir(ws().root)).toContain(live);
		await s.close();
	});
});

/** This process's descriptors on anything in the scratch tree (the pinned roots and dirs among them). */
async function openFdsInScratch(): Promise<string[]> {
	const held: string[] = [];
	for (const fd of await readdir("/proc/self/fd")) {
		const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
		if (target.startsWith(dirname(ws().root))) held.push(target);
	}
	return held;
}

describe("pinned handles are closed", () => {
	it("no descriptor is left open after every tool ran (successes and failures) and the session closed", async () => {
		expect(await openFdsInScratch()).toEqual([]);
		const s = await ws().open({ profile: "unified" });
		const pi = await ws().open();
		for (let i = 0; i < 20; i++) {
			await s.call("read", { path: "inner/ok.txt" });
			await s.call("read", { path: "inner/missing.txt" });
			await s.call("read", { path: "out-dir/secret-name.txt" });
			await s.call("ls", { path: "inner" });
			await s.call("ls", { path: "inner/ok.txt" });
			await s.call("find", { pattern: "*", path: "inner" });
			await s.call("grep", { pattern: "needle", path: "inner" });
			await s.call("grep", { pattern: "needle", path: "inner/ok.txt" });
			await s.call("grep", { pattern: "needle", path: "inner/nothing" });
			await pi.call("write", { path: `inner/new/deeper/w${i}.txt`, content: "w\n" });
			await pi.call("write", { path: `inner/ok.txt/bad${i}`, content: "w\n" });
			await pi.call("edit", { path: "inner/ok.txt", edits: [{ oldText: "needle", newText: "needle" }] });
			await s.call("file", { queries: [{ type: "delete", path: `inner/new/deeper/w${i}.txt` }] });
			await s.call("file", { queries: [{ type: "delete", path: "inner/gone.txt" }] });
		}
		// Only the pinned roots (the workspace, the spill directory) stay open while the sessions live.
		expect(new Set(await openFdsInScratch())).toEqual(new Set([ws().root, ws().spillDir]));
		await s.close();
		await pi.close();
		expect(await openFdsInScratch()).toEqual([]);
	});
});
