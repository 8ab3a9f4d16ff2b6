/**
 * Listings reveal nothing outside the roots, the temp sweep removes only keel's
 * own temp files (item 4), and the pinned handles are all closed (item 1). Through the tools.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
	chown,
	mkdir,
	mkdtemp,
	readdir,
	readlink,
	realpath,
	rm,
	stat,
	symlink,
	writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import { createLocalTools } from "../../src/backend/search/local-runner.js";
import { type CallResult, Session } from "../../src/session.js";

const SECRET = "SECRETBYTES";
const SECRET_NAME = "secret-name.txt";
const tools = await createLocalTools().detect();
const HAS_NATIVE = tools.rg !== undefined && tools.fd !== undefined;

let scratch: string;
let root: string;
let elsewhere: string;

beforeEach(async () => {
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-contain-")));
	root = join(scratch, "root");
	elsewhere = join(scratch, "elsewhere");
	await mkdir(join(root, "inner"), { recursive: true });
	await mkdir(join(elsewhere, "deep"), { recursive: true });
	await writeFile(join(elsewhere, SECRET_NAME), `${SECRET}\n`);
	await writeFile(join(elsewhere, "deep", SECRET_NAME), `${SECRET}\n`);
	await writeFile(join(root, "inner", "ok.txt"), "needle inside\n");
	await symlink(elsewhere, join(root, "out-dir"));
	await symlink(join(elsewhere, SECRET_NAME), join(root, "out-file"));
	await symlink("inner", join(root, "in-dir"));
	await symlink(join(scratch, "missing"), join(root, "dangling"));
});
afterEach(async () => {
	await rm(scratch, { recursive: true, force: true });
});

const text = (r: CallResult) => JSON.stringify(r);
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!;

describe("listings reveal nothing outside the roots", () => {
	it("ls lists a link to an outside directory as a plain name; a link inside as a directory", async () => {
		const s = await Session.create({ root, spillDir: join(scratch, "spill") });
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
				const s = await Session.create({
					root,
					backend: createLocalBackend({ searchEngine: engine }),
					spillDir: join(scratch, "spill"),
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
		await writeFile(join(root, leftover), "half-written\n");
		await writeFile(join(root, lookalike), "my notes\n");
		await mkdir(join(root, dirLike));
		await writeFile(join(root, dirLike, "kept.txt"), "kept\n");
		execFileSync("mkfifo", [join(root, fifoLike)]);
		await writeFile(join(root, othersLike), "someone else's\n");
		const asRoot = process.getuid?.() === 0;
		if (asRoot) await chown(join(root, othersLike), 65534, 65534);
		const s = await Session.create({ root, spillDir: join(scratch, "spill") });
		const names = await readdir(root);
		expect(names).not.toContain(leftover);
		expect(names).toContain(lookalike);
		expect(names).toContain(dirLike);
		expect((await stat(join(root, dirLike, "kept.txt"))).isFile()).toBe(true);
		expect(names).toContain(fifoLike);
		if (asRoot) expect(names).toContain(othersLike);
		// The session works after the sweep.
		expect((await s.call("read", { path: lookalike })).ok).toBe(true);
		await s.close();
	});

	it("a live writer's temp file is kept", async () => {
		const live = `.keel-tmp-${process.ppid}-0123456789ab-f.txt`;
		await writeFile(join(root, live), "in progress\n");
		const s = await Session.create({ root, spillDir: join(scratch, "spill") });
		expect(await readdir(root)).toContain(live);
		await s.close();
	});
});

/** This process's descriptors on anything in the scratch tree (the pinned roots and dirs among them). */
async function openFdsInScratch(): Promise<string[]> {
	const held: string[] = [];
	for (const fd of await readdir("/proc/self/fd")) {
		const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
		if (target.startsWith(scratch)) held.push(target);
	}
	return held;
}

describe("pinned handles are closed", () => {
	it("no descriptor is left open after every tool ran (successes and failures) and the session closed", async () => {
		expect(await openFdsInScratch()).toEqual([]);
		const s = await Session.create({ root, spillDir: join(scratch, "spill"), profile: "unified" });
		const pi = await Session.create({ root, spillDir: join(scratch, "spill") });
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
		expect(new Set(await openFdsInScratch())).toEqual(new Set([root, join(scratch, "spill")]));
		await s.close();
		await pi.close();
		expect(await openFdsInScratch()).toEqual([]);
	});
});
