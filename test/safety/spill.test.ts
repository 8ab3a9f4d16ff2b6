/**
 * Spill files belong to one session: a fresh directory per session that a planted
 * `$TMPDIR/keel-spill-<uid>` link cannot redirect, owner and mode checked, readable through that
 * session's guard only; a spill that fails (a full disk, a read-only or vanished directory) still
 * returns the bounded result with a note; directories of sessions that are gone are swept, and
 * nothing else is.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
	chownSync,
	existsSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sweepDeadSpillDirs } from "../../src/boundary/spill.js";
import { type CallResult, Session } from "../../src/session.js";

const UID = process.getuid?.() ?? -1;
const BIG = "seq 1 100000"; // 588 KB, 100000 lines: past both limits

let base: string;
let savedTmp: string | undefined;
const sessions: Session[] = [];

beforeEach(async () => {
	base = await realpath(await mkdtemp(join(tmpdir(), "keel-spilltest-")));
	mkdirSync(join(base, "tmp"));
	mkdirSync(join(base, "root"));
	mkdirSync(join(base, "other"));
	savedTmp = process.env.TMPDIR;
	// os.tmpdir() reads $TMPDIR on every call: the sessions of this file spill under base/tmp.
	process.env.TMPDIR = join(base, "tmp");
});

afterEach(async () => {
	for (const s of sessions.splice(0)) await s.close();
	if (savedTmp === undefined) delete process.env.TMPDIR;
	else process.env.TMPDIR = savedTmp;
	await rm(base, { recursive: true, force: true });
});

async function open(root = join(base, "root"), spillDir?: string): Promise<Session> {
	const s = await Session.create({ root, spillDir });
	sessions.push(s);
	return s;
}

function fullPath(r: CallResult): string | undefined {
	expect(r.ok, JSON.stringify(r).slice(0, 300)).toBe(true);
	return (r as { details?: { fullOutputPath?: string } }).details?.fullOutputPath;
}

const textOf = (r: CallResult) =>
	r.ok ? r.content.map((c) => (c.type === "text" ? c.text : "")).join("") : "";

describe("a session's spill directory", () => {
	it("is not redirected by a planted $TMPDIR/keel-spill-<uid> link to /", async () => {
		const planted = join(base, "tmp", `keel-spill-${UID}`);
		symlinkSync("/", planted);
		const s = await open();
		const path = fullPath(await s.call("bash", { command: BIG }));
		expect(path).toBeDefined();
		expect(dirname(path!).startsWith(join(base, "tmp", `keel-spill-${UID}-${process.pid}-`))).toBe(true);
		expect(readFileSync(path!, "utf8").split("\n")[99999]).toBe("100000");
		// Nothing outside the roots became readable: not through the link, not by absolute path.
		for (const p of ["/etc/passwd", join(planted, "etc", "passwd"), "/etc/hostname"]) {
			const r = await s.call("read", { path: p });
			expect(r.ok ? "read" : r.error.code, p).toBe("PATH_OUTSIDE_ROOTS");
		}
		expect(lstatSync(planted).isSymbolicLink()).toBe(true);
		// The directory is this user's, mode 0700; the file 0600.
		const st = lstatSync(dirname(path!));
		expect(st.isDirectory()).toBe(true);
		expect(st.uid).toBe(UID);
		expect(st.mode & 0o777).toBe(0o700);
		expect(lstatSync(path!).mode & 0o777).toBe(0o600);
	});

	it("is readable through its own session's guard only", async () => {
		const a = await open();
		const b = await open(join(base, "other"));
		const path = fullPath(await a.call("bash", { command: BIG }))!;
		const own = await a.call("read", { path, offset: 99999, limit: 2 });
		expect(textOf(own)).toContain("99999\n100000");
		const other = await b.call("read", { path });
		expect(other.ok ? "read" : other.error.code).toBe("PATH_OUTSIDE_ROOTS");
		const listing = await b.call("bash", { command: "true" });
		expect(listing.ok).toBe(true);
		// b's own spill directory is another one.
		const bPath = fullPath(await b.call("bash", { command: BIG }))!;
		expect(dirname(bPath)).not.toBe(dirname(path));
		const cross = await a.call("read", { path: bPath });
		expect(cross.ok ? "read" : cross.error.code).toBe("PATH_OUTSIDE_ROOTS");
	});

	it("refuses a caller's spill directory that is a link or someone else's", async () => {
		const target = join(base, "target");
		mkdirSync(target);
		symlinkSync(target, join(base, "linked"));
		await expect(open(undefined, join(base, "linked"))).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
		if (UID === 0) {
			const foreign = join(base, "foreign");
			mkdirSync(foreign, { mode: 0o700 });
			chownSync(foreign, 65534, 65534);
			await expect(open(undefined, foreign)).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
		}
	});

	it("goes at close when empty; one with spilled files stays for its path", async () => {
		const quiet = await open();
		await quiet.call("bash", { command: "echo hi" });
		const spilled = await open();
		const path = fullPath(await spilled.call("bash", { command: BIG }))!;
		const before = readdirSync(join(base, "tmp")).filter((n) => n.startsWith(`keel-spill-${UID}-`));
		expect(before.length).toBe(2);
		await quiet.close();
		await spilled.close();
		const after = readdirSync(join(base, "tmp")).filter((n) => n.startsWith(`keel-spill-${UID}-`));
		expect(after).toEqual([dirname(path).split("/").pop()]);
		expect(existsSync(path)).toBe(true);
	});
});

describe("a spill that fails", () => {
	const mounted: string[] = [];
	afterEach(() => {
		for (const m of mounted.splice(0)) spawnSync("umount", ["-l", m]);
	});

	/** A tiny tmpfs at `dir`, or undefined when this machine cannot mount one. */
	function tinyTmpfs(dir: string): string | undefined {
		mkdirSync(dir, { recursive: true });
		const r = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir], {
			encoding: "utf8",
		});
		if (r.status !== 0) return undefined;
		mounted.push(dir);
		return dir;
	}

	it("on a full disk (ENOSPC) still returns the bounded result, with a note", async (ctx) => {
		const disk = tinyTmpfs(join(base, "disk"));
		if (!disk) {
			console.warn("skipping the ENOSPC spill test: cannot mount a tmpfs here (needs root)");
			return ctx.skip();
		}
		process.env.TMPDIR = disk;
		const s = await open();
		const r = await s.call("bash", { command: BIG });
		expect(r.ok).toBe(true);
		const text = textOf(r);
		expect(text).toContain("\n100000\n\n[Showing lines");
		expect(text).toContain("The full output could not be kept (ENOSPC: no space left on the device)");
		expect(Buffer.byteLength(text)).toBeLessThan(60 * 1024);
		expect((r as { details: { fullOutputPath?: string } }).details.fullOutputPath).toBeUndefined();
		// No partial file is left to be mistaken for the whole output.
		const dirs = readdirSync(disk).filter((n) => n.startsWith("keel-spill-"));
		expect(dirs.length).toBe(1);
		expect(readdirSync(join(disk, dirs[0]))).toEqual([]);
		// The session goes on working, python included in the same sink path.
		expect(textOf(await s.call("bash", { command: "echo after" }))).toContain("after");
	});

	it("on a read-only or vanished directory (EROFS, ENOENT) too", async (ctx) => {
		const disk = tinyTmpfs(join(base, "ro"));
		if (!disk) {
			console.warn("skipping the EROFS spill test: cannot mount a tmpfs here (needs root)");
			return ctx.skip();
		}
		process.env.TMPDIR = disk;
		const s = await open();
		execFileSync("mount", ["-o", "remount,ro", disk]);
		const r = await s.call("bash", { command: BIG });
		expect(textOf(r)).toContain("The full output could not be kept (EROFS: read-only file system)");
		execFileSync("mount", ["-o", "remount,rw", disk]);
		// EACCES cannot be made for root by mode bits; a directory removed under the session can.
		process.env.TMPDIR = join(base, "tmp");
		const gone = await open();
		const path = fullPath(await gone.call("bash", { command: "echo x" }));
		expect(path).toBeUndefined();
		const dir = readdirSync(join(base, "tmp")).find((n) => n.startsWith(`keel-spill-${UID}-`))!;
		await rm(join(base, "tmp", dir), { recursive: true });
		const r2 = await gone.call("bash", { command: BIG });
		expect(r2.ok).toBe(true);
		expect(textOf(r2)).toContain("The full output could not be kept (ENOENT: the spill directory is gone)");
	});
});

describe("sweeping spill directories of sessions that are gone", () => {
	async function deadPid(): Promise<number> {
		const child = spawn("true");
		await new Promise((r) => child.on("exit", r));
		return child.pid!;
	}

	it("removes only this user's, by name format, real directories, writer pid gone", async () => {
		const tmp = join(base, "tmp");
		const dead = await deadPid();
		const alive = spawn("sleep", ["30"]);
		try {
			const victim = join(base, "victim");
			mkdirSync(victim);
			writeFileSync(join(victim, "keep.txt"), "precious\n");
			const make = (name: string, owner?: number) => {
				mkdirSync(join(tmp, name), { mode: 0o700 });
				writeFileSync(join(tmp, name, "bash-1.log"), "old output\n");
				if (owner !== undefined) chownSync(join(tmp, name), owner, owner);
				return join(tmp, name);
			};
			const gone = make(`keel-spill-${UID}-${dead}-aB3dE9`);
			const kept = [
				make(`keel-spill-${UID}-${alive.pid}-aB3dE9`), // its writer still runs
				make(`keel-spill-${UID + 1}-${dead}-aB3dE9`), // another uid in the name
				make(`keel-spill-${UID}-${dead}-aB3dE9x`), // not the format
				make(`keel-spill-${UID}`), // the old shared directory's name
				make(`other-${UID}-${dead}-aB3dE9`),
			];
			if (UID === 0) kept.push(make(`keel-spill-${UID}-${dead}-zZ9yY8`, 65534)); // not ours
			const link = join(tmp, `keel-spill-${UID}-${dead}-L1nkEd`);
			symlinkSync(victim, link); // a planted link in the format
			const s = await open();
			expect(existsSync(gone)).toBe(false);
			for (const k of kept) expect(existsSync(join(k, "bash-1.log")), k).toBe(true);
			expect(lstatSync(link).isSymbolicLink()).toBe(true);
			expect(readFileSync(join(victim, "keep.txt"), "utf8")).toBe("precious\n");
			// This process's own directories (the session just opened) are never swept.
			await sweepDeadSpillDirs(tmp);
			expect(existsSync(dirname(fullPath(await s.call("bash", { command: BIG }))!))).toBe(true);
		} finally {
			alive.kill("SIGKILL");
		}
	});
});
