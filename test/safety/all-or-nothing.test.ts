/**
 * All-or-nothing for the file tool and apply_patch: a commit that fails after
 * other files of the same call were committed puts those back (exact bytes and mode; created files
 * removed; deleted files recreated), each restore a compare-and-swap; a restore that would clobber
 * another writer's change is not done, and the result names the file and where its old bytes are.
 *
 * The mid-batch failure is a real other writer: the local backend's beforeCommit point (after the
 * temp file is durable, before the compare-and-swap) or, for removals, a FileOps wrapper that lets
 * the other writer change the file right before keel's unlink runs.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Backend } from "../../src/backend/types.js";
import { sealRecord } from "../../src/safety/journal.js";
import { type CallResult, Session } from "../../src/session.js";

let work: string;
let root: string;
let stateDir: string;
const sessions: Session[] = [];

beforeEach(async () => {
	work = await mkdtemp(join(tmpdir(), "keel-aon-"));
	root = join(work, "root");
	// Beside the work directory, not in it: a session on `work` itself must not have it inside its root.
	stateDir = `${work}-state`;
	execFileSync("mkdir", ["-p", root]);
});
afterEach(async () => {
	await Promise.all(sessions.splice(0).map((s) => s.close()));
	await rm(work, { recursive: true, force: true });
	await rm(stateDir, { recursive: true, force: true });
});

const p = (name: string) => join(root, name);
const patch = (...body: string[]) => ["*** Begin Patch", ...body, "*** End Patch", ""].join("\n");

async function open(backend?: Backend): Promise<Session> {
	const s = await Session.create({ root, profile: "unified", stateDir, backend });
	sessions.push(s);
	return s;
}

function fail(r: CallResult) {
	if (r.ok) throw new Error(`expected failure, got ${JSON.stringify(r.content)}`);
	return r.error;
}

/** A local backend where another writer changes `victim` right before keel's commit of it. */
function racingBackend(victim: () => string, race: () => Promise<void>): Backend {
	return createLocalBackend({
		hooks: {
			beforeCommit: async (target) => {
				if (target === victim()) await race();
			},
		},
	});
}

async function journalEntries(): Promise<string[]> {
	const dir = join(stateDir, "journal");
	const keys = await readdir(dir).catch(() => [] as string[]);
	const out: string[] = [];
	for (const k of keys) for (const e of await readdir(join(dir, k))) out.push(join(dir, k, e));
	return out;
}

describe("a commit fails mid-batch: everything this call committed is put back", () => {
	it("file tool: edit a, write new, edit b (changed by another writer at commit): a and new restored", async () => {
		await writeFile(p("a.txt"), "alpha\n");
		await chmod(p("a.txt"), 0o751);
		await writeFile(p("b.txt"), "beta\n");
		const s = await open(
			racingBackend(
				() => `${root}/b.txt`,
				() => writeFile(p("b.txt"), "theirs\n"),
			),
		);
		const err = fail(
			await s.call("file", {
				queries: [
					{ type: "edit", path: "a.txt", edits: [{ oldText: "alpha", newText: "ALPHA" }] },
					{ type: "write", path: "new/n.txt", content: "new\n" },
					{ type: "edit", path: "b.txt", edits: [{ oldText: "beta", newText: "BETA" }] },
				],
			}),
		);
		expect(err.code).toBe("CHANGED_ON_DISK");
		expect(err.message).toContain("queries[2]");
		expect(err.message).toMatch(
			/Nothing was changed: 2 file\(s\) .* restored \(.*a\.txt.*new\/n\.txt|Nothing was changed: 2 file\(s\) .* restored \(.*new\/n\.txt.*a\.txt/,
		);
		expect(err.details).toMatchObject({ allOrNothing: "rolled-back", unresolved: [] });
		expect(await readFile(p("a.txt"), "utf8")).toBe("alpha\n");
		expect((await stat(p("a.txt"))).mode & 0o7777).toBe(0o751);
		await expect(stat(p("new/n.txt"))).rejects.toThrow();
		// The other writer's bytes survive.
		expect(await readFile(p("b.txt"), "utf8")).toBe("theirs\n");
		expect(await journalEntries()).toEqual([]);
		// The session may edit a.txt again: the restored file counts as what it read.
		const again = await s.call("file", {
			queries: [{ type: "edit", path: "a.txt", edits: [{ oldText: "alpha", newText: "A2" }] }],
		});
		expect(again.ok).toBe(true);
	});

	it("apply_patch: a deleted file is recreated with its bytes and mode, an added one removed", async () => {
		await writeFile(p("gone.txt"), "keep me\n");
		await chmod(p("gone.txt"), 0o600);
		await writeFile(p("b.txt"), "beta\n");
		await writeFile(p("c.txt"), "gamma\n");
		const fs = createLocalBackend();
		// Removals commit last; the other writer touches c.txt just before keel removes it.
		const backend: Backend = {
			...fs,
			fs: {
				...fs.fs,
				unlink: async (path, expect) => {
					if (path === `${root}/c.txt`) await writeFile(p("c.txt"), "theirs\n");
					return fs.fs.unlink(path, expect);
				},
			},
		};
		const s = await open(backend);
		const err = fail(
			await s.call("apply_patch", {
				input: patch(
					"*** Add File: added.txt",
					"+x",
					"*** Delete File: gone.txt",
					"*** Update File: b.txt",
					"@@",
					"-beta",
					"+BETA",
					"*** Delete File: c.txt",
				),
			}),
		);
		expect(err.code).toBe("CHANGED_ON_DISK");
		expect(err.details).toMatchObject({ allOrNothing: "rolled-back" });
		expect(await readFile(p("gone.txt"), "utf8")).toBe("keep me\n");
		expect((await stat(p("gone.txt"))).mode & 0o7777).toBe(0o600);
		expect(await readFile(p("b.txt"), "utf8")).toBe("beta\n");
		await expect(stat(p("added.txt"))).rejects.toThrow();
		expect(await readFile(p("c.txt"), "utf8")).toBe("theirs\n");
		expect(await journalEntries()).toEqual([]);
	});

	it("a restore that would clobber another writer's change is not done; the file and its old bytes are named", async () => {
		await writeFile(p("a.txt"), "alpha\n");
		await writeFile(p("b.txt"), "beta\n");
		// When b commits, the other writer has changed both: a (already committed by keel) and b.
		const s = await open(
			racingBackend(
				() => `${root}/b.txt`,
				async () => {
					await writeFile(p("a.txt"), "their a\n");
					await writeFile(p("b.txt"), "their b\n");
				},
			),
		);
		const err = fail(
			await s.call("apply_patch", {
				input: patch(
					"*** Update File: a.txt",
					"@@",
					"-alpha",
					"+ALPHA",
					"*** Update File: b.txt",
					"@@",
					"-beta",
					"+BETA",
				),
			}),
		);
		expect(err.code).toBe("CHANGED_ON_DISK");
		expect(err.details).toMatchObject({ allOrNothing: "partial" });
		const unresolved = err.details!.unresolved as Array<{ path: string; state: string; kept: string }>;
		expect(unresolved.map((u) => u.path)).toEqual(["a.txt"]);
		expect(err.message).toContain("a.txt changed by another writer");
		expect(err.message).toContain(unresolved[0].kept);
		// Nothing clobbered ...
		expect(await readFile(p("a.txt"), "utf8")).toBe("their a\n");
		expect(await readFile(p("b.txt"), "utf8")).toBe("their b\n");
		// ... and a's previous bytes are where the message says.
		const kept = await readdir(unresolved[0].kept);
		const befores = await Promise.all(
			kept.filter((n) => n.endsWith(".before")).map((n) => readFile(join(unresolved[0].kept, n), "utf8")),
		);
		expect(befores).toContain("alpha\n");
		// A later session does not try again: the record is marked unresolved.
		const next = await open();
		expect(next.recovery).toEqual([]);
		expect(await readFile(p("a.txt"), "utf8")).toBe("their a\n");
	});
});

describe("the journal", () => {
	it("a single-file change writes no journal; a multi-file one leaves none behind", async () => {
		await writeFile(p("a.txt"), "a\n");
		await writeFile(p("b.txt"), "b\n");
		const s = await open();
		expect(
			(await s.call("apply_patch", { input: patch("*** Update File: a.txt", "@@", "-a", "+A") })).ok,
		).toBe(true);
		await expect(stat(join(stateDir, "journal"))).rejects.toThrow();
		const both = await s.call("file", {
			queries: [
				{ type: "edit", path: "a.txt", edits: [{ oldText: "A", newText: "A2" }] },
				{ type: "edit", path: "b.txt", edits: [{ oldText: "b", newText: "B2" }] },
			],
		});
		expect(both.ok).toBe(true);
		expect(await readFile(p("a.txt"), "utf8")).toBe("A2\n");
		expect(await readFile(p("b.txt"), "utf8")).toBe("B2\n");
		expect((await stat(join(stateDir, "journal"))).isDirectory()).toBe(true);
		expect(await journalEntries()).toEqual([]);
	});

	for (const theirs of [false, true]) {
		it(`a dead writer's half-done change is ${theirs ? "left, and named, where someone changed a file since" : "rolled back"} by the next session`, async () => {
			await writeFile(p("a.txt"), "alpha\n");
			await writeFile(p("b.txt"), "beta\n");
			await writeFile(p("c.txt"), "gamma\n");
			// The writer stalls forever in b's commit, after a was committed (a stand-in for a kill).
			const s = await open(
				racingBackend(
					() => `${root}/b.txt`,
					() => new Promise<void>(() => {}),
				),
			);
			void s.call("apply_patch", {
				input: patch(
					"*** Update File: a.txt",
					"@@",
					"-alpha",
					"+ALPHA",
					"*** Update File: b.txt",
					"@@",
					"-beta",
					"+BETA",
					"*** Delete File: c.txt",
				),
			});
			for (let i = 0; i < 200 && (await readFile(p("a.txt"), "utf8")) !== "ALPHA\n"; i++)
				await new Promise((r) => setTimeout(r, 10));
			expect(await readFile(p("a.txt"), "utf8")).toBe("ALPHA\n");
			// The record names this (live) process: a new session leaves a change in progress alone.
			const [entry] = await journalEntries();
			expect((await open()).recovery).toEqual([]);
			expect(await readFile(p("a.txt"), "utf8")).toBe("ALPHA\n");
			// Make the record a dead process's, as a SIGKILL would leave it (sealed again with the
			// user's key, which the test can read as the user it runs as).
			const dead = deadPid();
			const key = await readFile(join(stateDir, "record-key"));
			const stored = JSON.parse(await readFile(join(entry, "intent.json"), "utf8"));
			const intent = JSON.parse(stored.body);
			intent.pid = dead;
			intent.pidStart = "";
			await writeFile(join(entry, "intent.json"), sealRecord(key, intent), { mode: 0o600 });
			const parts = entry.split("/");
			const [t, , , r] = parts[parts.length - 1].split("-");
			await rename(entry, join(entry, "..", `${t}-${dead}--${r}`));
			if (theirs) await writeFile(p("a.txt"), "someone else\n");
			const next = await open();
			expect(next.recovery).toHaveLength(1);
			expect(await readFile(p("b.txt"), "utf8")).toBe("beta\n");
			expect(await readFile(p("c.txt"), "utf8")).toBe("gamma\n");
			if (!theirs) {
				expect(next.recovery[0]).toMatchObject({ outcome: "rolled-back", unresolved: [] });
				expect(await readFile(p("a.txt"), "utf8")).toBe("alpha\n");
				expect(await journalEntries()).toEqual([]);
			} else {
				expect(next.recovery[0].outcome).toBe("unresolved");
				expect(next.recovery[0].unresolved.map((u) => u.path)).toEqual([`${root}/a.txt`]);
				expect(await readFile(p("a.txt"), "utf8")).toBe("someone else\n");
				const kept = next.recovery[0].record;
				expect(kept).toContain("unresolved-");
				expect(await readFile(join(kept, "0.before"), "utf8")).toBe("alpha\n");
			}
		});
	}
});

/** A pid that is not running: a child that has exited. */
function deadPid(): number {
	const out = execFileSync("sh", ["-c", "sh -c 'echo $$' & wait"], { encoding: "utf8" });
	return Number(out.trim());
}

/**
 * A half-done change as a killed writer leaves it: a writer stalled forever after committing
 * a.txt (of a.txt, b.txt and c.txt's deletion), its record then made to name `writer` (sealed
 * again with the user's key) as a SIGKILL would leave it.
 */
async function halfDone(writer: { pid: number; start: string }, dir = ""): Promise<void> {
	await writeFile(p(`${dir}a.txt`), "alpha\n");
	await writeFile(p(`${dir}b.txt`), "beta\n");
	await writeFile(p(`${dir}c.txt`), "gamma\n");
	const s = await open(
		racingBackend(
			() => `${root}/${dir}b.txt`,
			() => new Promise<void>(() => {}),
		),
	);
	void s.call("apply_patch", {
		input: patch(
			`*** Update File: ${dir}a.txt`,
			"@@",
			"-alpha",
			"+ALPHA",
			`*** Update File: ${dir}b.txt`,
			"@@",
			"-beta",
			"+BETA",
			`*** Delete File: ${dir}c.txt`,
		),
	});
	for (let i = 0; i < 200 && (await readFile(p(`${dir}a.txt`), "utf8")) !== "ALPHA\n"; i++)
		await new Promise((r) => setTimeout(r, 10));
	const [entry] = await journalEntries();
	const key = await readFile(join(stateDir, "record-key"));
	const intent = JSON.parse(JSON.parse(await readFile(join(entry, "intent.json"), "utf8")).body);
	intent.pid = writer.pid;
	intent.pidStart = writer.start;
	await writeFile(join(entry, "intent.json"), sealRecord(key, intent), { mode: 0o600 });
	const [t, , , r] = entry.split("/").pop()!.split("-");
	await rename(entry, join(entry, "..", `${t}-${writer.pid}-${writer.start}-${r}`));
}

describe("recovery finds every record it can reach, and is not fooled by a zombie", () => {
	it("a writer killed but not reaped (a zombie) is dead: its change is rolled back", async () => {
		// `sleep 0` exits at once; its parent execs `sleep 30`, which never reaps it.
		const holder = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 30"], {
			stdio: ["ignore", "pipe", "ignore"],
		});
		try {
			const zombie = Number(
				(await new Promise<Buffer>((r) => holder.stdout.once("data", r))).toString().trim(),
			);
			let stat = "";
			for (let i = 0; i < 100 && !/\) Z /.test(stat); i++) {
				stat = await readFile(`/proc/${zombie}/stat`, "utf8");
				await new Promise((r) => setTimeout(r, 10));
			}
			expect(stat).toMatch(/\) Z /);
			// kill(pid, 0) succeeds on a zombie: that alone would leave the change half done.
			expect(() => process.kill(zombie, 0)).not.toThrow();
			const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
			await halfDone({ pid: zombie, start });
			const next = await open();
			expect(next.recovery.map((r) => r.outcome)).toEqual(["rolled-back"]);
			expect(await readFile(p("a.txt"), "utf8")).toBe("alpha\n");
		} finally {
			holder.kill("SIGKILL");
		}
	});

	it("a live pid with another start time (a reused pid) is not the writer", async () => {
		await halfDone({ pid: process.pid, start: "1" });
		const next = await open();
		expect(next.recovery.map((r) => r.outcome)).toEqual(["rolled-back"]);
		expect(await readFile(p("a.txt"), "utf8")).toBe("alpha\n");
	});

	it("a session on the workspace's parent finishes its change; so does one on a child root holding every file", async () => {
		await halfDone({ pid: deadPid(), start: "" });
		const parent = await Session.create({ root: work, profile: "unified", stateDir });
		sessions.push(parent);
		expect(parent.recovery.map((r) => r.outcome)).toEqual(["rolled-back"]);
		expect(await readFile(p("a.txt"), "utf8")).toBe("alpha\n");
		expect(await readFile(p("c.txt"), "utf8")).toBe("gamma\n");
	});

	it("a session on a child root finishes a change whose files are all inside it", async () => {
		await mkdir(p("sub"));
		await halfDone({ pid: deadPid(), start: "" }, "sub/");
		const child = await Session.create({ root: p("sub"), profile: "unified", stateDir });
		sessions.push(child);
		expect(child.recovery.map((r) => r.outcome)).toEqual(["rolled-back"]);
		expect(await readFile(p("sub/a.txt"), "utf8")).toBe("alpha\n");
		expect(await readFile(p("sub/c.txt"), "utf8")).toBe("gamma\n");
	});
});
