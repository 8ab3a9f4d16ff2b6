/**
 * Undo that covers the shell, through the tools: after each command a restore gives back exactly
 * the earlier tree (bytes, modes, links, empty directories); a file someone else changed in between
 * is a conflict that changes nothing; budgets are enforced and named.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSession, type Session } from "../../src/index.js";
import { COMMANDS, seed } from "./commands.js";
import { snapshot } from "./tree.js";

let dir: string;
let root: string;
let session: Session;

async function ok(name: string, args: unknown) {
	const r = await session.callDynamic(name, args);
	if (!r.ok) throw new Error(`${name} failed: ${JSON.stringify(r.error)}`);
	return r;
}

beforeEach(async () => {
	dir = mkdtempSync(join(tmpdir(), "keel-undo-"));
	root = join(dir, "ws");
	mkdirSync(root);
	seed(root);
	session = await createSession({
		root,
		profile: "unified",
		stateDir: join(dir, "state"),
		checkpoints: true,
	});
});
afterEach(async () => {
	await session.close();
	rmSync(dir, { recursive: true, force: true });
});

const git = (args: string[]) =>
	execFileSync("git", ["-c", "user.email=k@e.l", "-c", "user.name=keel", ...args], {
		cwd: root,
		stdio: "pipe",
	});

describe("a restore after a shell command gives back exactly the earlier tree", () => {
	it.each(COMMANDS)("%s", async (_label, command) => {
		const before = snapshot(root);
		await ok("bash", { command });
		expect(snapshot(root)).not.toEqual(before);
		const r = await ok("checkpoints", { action: "restore" });
		expect(snapshot(root)).toEqual(before);
		expect((r.details as { problems: unknown[] }).problems).toEqual([]);
	});

	it("git checkout of another branch is undone, .git itself untouched by the restore", async () => {
		git(["init", "-q"]);
		git(["add", "-A"]);
		git(["commit", "-qm", "one"]);
		git(["checkout", "-qb", "other"]);
		writeFileSync(join(root, "src/a.txt"), "on other\n");
		writeFileSync(join(root, "only-other.txt"), "o\n");
		git(["add", "-A"]);
		git(["commit", "-qm", "two"]);
		git(["checkout", "-q", "master"]);
		// The session's first scan is the state on master.
		await session.close();
		session = await createSession({
			root,
			profile: "unified",
			stateDir: join(dir, "state"),
			checkpoints: true,
		});
		const before = snapshot(root);
		const head = git(["rev-parse", "HEAD"]).toString();
		await ok("bash", { command: "git checkout -q other" });
		expect(snapshot(root)).not.toEqual(before);
		await ok("checkpoints", { action: "restore" });
		expect(snapshot(root)).toEqual(before);
		// .git was left out: HEAD still names the branch the command checked out.
		expect(git(["rev-parse", "HEAD"]).toString()).not.toBe(head);
	});

	it("a python call's writes are a checkpoint too", async () => {
		const before = snapshot(root);
		await ok("python", { code: "open('src/a.txt','w').write('from python\\n')" });
		await ok("checkpoints", { action: "restore" });
		expect(snapshot(root)).toEqual(before);
	});

	it("undo goes back call by call, and a restore can itself be undone", async () => {
		const t0 = snapshot(root);
		await ok("bash", { command: "echo one >> src/a.txt" });
		const t1 = snapshot(root);
		await ok("bash", { command: "echo two >> src/a.txt && rm bin.dat" });
		const t2 = snapshot(root);
		const list = await ok("checkpoints", { action: "list" });
		const cps = (list.details as { checkpoints: Array<{ id: number; tool: string; files: string[] }> })
			.checkpoints;
		expect(cps.map((c) => c.tool)).toEqual(["start", "bash", "bash"]);
		expect(cps[2].files).toEqual([join(root, "bin.dat"), join(root, "src/a.txt")]);
		await ok("checkpoints", { action: "restore", id: cps[1].id });
		expect(snapshot(root)).toEqual(t1);
		const back = await ok("checkpoints", { action: "restore", id: 0 });
		expect(snapshot(root)).toEqual(t0);
		// Undo the restore: back to t1.
		await ok("checkpoints", { action: "restore" });
		expect(snapshot(root)).toEqual(t1);
		expect((back.details as { to: number }).to).toBe(0);
		expect(t2).not.toEqual(t1);
	});

	it("diff shows what changed since a checkpoint", async () => {
		await ok("bash", { command: "sed -i 's/beta/BETA/' src/a.txt && rm src/deep/b.py" });
		const d = await ok("checkpoints", { action: "diff", id: 0 });
		const textOut = (d.content[0] as { text: string }).text;
		expect(textOut).toContain("-beta");
		expect(textOut).toContain("+BETA");
		expect(textOut).toContain(`${join(root, "src/deep/b.py")}: file`);
	});
});

describe("a change made outside keel's calls is never overwritten", () => {
	it("what a background process writes after its call is recorded as made outside the calls", async () => {
		const started = await ok("bash", { command: "sleep 0.3; echo bg > bg.txt", background: true });
		const id = (started.details as { process: { id: number } }).process.id;
		// A wait is no checkpoint boundary: it does not hold other calls back while it waits.
		await ok("process", { action: "wait", id, timeout: 30 });
		const list = await ok("checkpoints", { action: "list" });
		const last = (list.details as { checkpoints: Array<{ tool: string; files: string[] }> }).checkpoints.at(
			-1,
		);
		expect(last?.tool).toBe("outside");
		expect(last?.files).toEqual([join(root, "bg.txt")]);
		const r = await session.call("checkpoints", { action: "restore", id: 0 });
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.error.code).toBe("RESTORE_CONFLICT");
	});

	it("a file the user changed after the call is a conflict, and nothing is restored", async () => {
		await ok("bash", { command: "echo model >> src/a.txt && echo model > src/new.txt" });
		writeFileSync(join(root, "src/a.txt"), "the user's own edit\n");
		const after = snapshot(root);
		const r = await session.call("checkpoints", { action: "restore" });
		expect(r.ok).toBe(false);
		if (r.ok) return;
		expect(r.error.code).toBe("RESTORE_CONFLICT");
		expect(r.error.message).toContain(join(root, "src/a.txt"));
		expect(snapshot(root)).toEqual(after);
	});

	it("with force, everything else is restored and the user's file is kept", async () => {
		await ok("bash", { command: "echo model >> src/a.txt && echo model > src/new.txt" });
		writeFileSync(join(root, "src/a.txt"), "the user's own edit\n");
		const r = await ok("checkpoints", { action: "restore", force: true });
		expect(snapshot(root)["src/a.txt"]).toBe(
			`file 644 ${Buffer.from("the user's own edit\n").toString("base64")}`,
		);
		expect(snapshot(root)["src/new.txt"]).toBeUndefined();
		expect((r.details as { problems: Array<{ path: string }> }).problems.map((p) => p.path)).toEqual([
			join(root, "src/a.txt"),
		]);
	});
});

describe("budgets and rules", () => {
	it("a file past the per-file budget is named as not restorable, and a restore over it is a conflict", async () => {
		await session.close();
		writeFileSync(join(root, "big.bin"), Buffer.alloc(64 * 1024, 7));
		session = await createSession({
			root,
			profile: "unified",
			stateDir: join(dir, "state"),
			checkpoints: { maxFileBytes: 16 * 1024 },
		});
		await ok("bash", { command: "printf x >> big.bin && echo y >> src/a.txt" });
		const list = await ok("checkpoints", { action: "list" });
		expect((list.details as { notRestorable: string[] }).notRestorable).toContain(join(root, "big.bin"));
		const r = await session.call("checkpoints", { action: "restore" });
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.error.message).toContain("big.bin");
	});

	it("the oldest checkpoints are dropped past maxCheckpoints, and the listing says so", async () => {
		await session.close();
		session = await createSession({
			root,
			profile: "unified",
			stateDir: join(dir, "state"),
			checkpoints: { maxCheckpoints: 2 },
		});
		for (let i = 0; i < 4; i++) await ok("bash", { command: `echo ${i} >> src/a.txt` });
		const list = await ok("checkpoints", { action: "list" });
		const l = list.details as { checkpoints: Array<{ id: number }>; dropped: number };
		expect(l.checkpoints.map((c) => c.id)).toEqual([2, 3, 4]);
		expect(l.dropped).toBe(2);
		const r = await session.call("checkpoints", { action: "restore", id: 0 });
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.error.code).toBe("UNKNOWN_CHECKPOINT");
	});

	it("node_modules and .gitignore'd paths are left out and named", async () => {
		writeFileSync(join(root, ".gitignore"), "*.log\n");
		await ok("bash", {
			command:
				"mkdir -p node_modules/x && echo a > node_modules/x/i.js && echo l > out.log && echo k > kept.txt",
		});
		const list = await ok("checkpoints", { action: "list" });
		const l = list.details as { leftOut: string[]; checkpoints: Array<{ files: string[] }> };
		expect(l.leftOut).toEqual(expect.arrayContaining([join(root, "node_modules"), join(root, "out.log")]));
		expect(l.checkpoints.at(-1)?.files).toContain(join(root, "kept.txt"));
		expect(l.checkpoints.flatMap((c) => c.files).some((f) => f.includes("node_modules"))).toBe(false);
	});

	it("an unknown budget name is an error before anything opens", async () => {
		await expect(
			createSession({ root, stateDir: join(dir, "state"), checkpoints: { maxFilebytes: 1 } as never }),
		).rejects.toThrow(/unknown checkpoints budget "maxFilebytes"/);
	});
});
