/**
 * keel's journal read back as hostile input. An attacker who can write into the state directory
 * plants intent records (in the unauthenticated form older keel wrote, and sealed with a key of
 * their own) that would make the next session create, read, restore or delete files outside what
 * the tools allow. Each case: the session still starts, the entry is set aside and named in one
 * line, and nothing inside or outside the roots changes. A record sealed with the user's real key
 * (standing for a bug in keel) is still held to its roots and to the session's path guard.
 * As root, files of another owner are planted too (chown to nobody).
 */

import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
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
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Intent, journalKey, sealRecord } from "../../src/safety/journal.js";
import { Session } from "../../src/session.js";

let work: string;
let root: string;
let outside: string;
let stateDir: string;
const sessions: Session[] = [];

const sha = (b: string | Buffer) => createHash("sha256").update(b).digest("hex");
const ZERO = "0".repeat(64);

/** A pid that is not running: a child that has exited and was reaped. */
function deadPid(): number {
	return Number(execFileSync("sh", ["-c", "sh -c 'echo $$' & wait"], { encoding: "utf8" }).trim());
}

/** Every file and link below `dir`, with its mode and bytes: what "nothing changed" compares. */
function snapshot(dir: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (d: string) => {
		for (const n of readdirSync(d)) {
			const p = join(d, n);
			const st = lstatSync(p);
			if (st.isDirectory()) {
				out[p] = `dir ${st.mode.toString(8)}`;
				walk(p);
			} else if (st.isSymbolicLink()) out[p] = "link";
			else out[p] = `${st.mode.toString(8)} ${sha(readFileSync(p))}`;
		}
	};
	walk(dir);
	return out;
}

beforeEach(async () => {
	work = await mkdtemp(join(tmpdir(), "keel-hostile-"));
	root = join(work, "root");
	outside = join(work, "outside");
	stateDir = join(work, "state");
	for (const d of [
		root,
		outside,
		join(root, ".git", "hooks"),
		join(root, ".git", "objects"),
		join(root, ".git", "refs"),
	])
		mkdirSync(d, { recursive: true });
	writeFileSync(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
	writeFileSync(join(root, "a.txt"), "a\n");
	writeFileSync(join(root, "b.txt"), "b\n");
	writeFileSync(join(outside, "keep.txt"), "outside, keep me\n");
	writeFileSync(join(outside, "secret"), "outside secret\n");
});
afterEach(async () => {
	await Promise.all(sessions.splice(0).map((s) => s.close()));
	await rm(work, { recursive: true, force: true });
});

async function open(): Promise<Session> {
	const s = await Session.create({ root, profile: "unified", stateDir });
	sessions.push(s);
	return s;
}

type Files = Array<{ path: string; before: Record<string, unknown>; after: Record<string, unknown> }>;

const ATTACK_NAMES = [
	"create a file outside every root (mode 0755)",
	"read a file outside the roots into the workspace (a backup name with ../..)",
	"restore a protected file (a git hook)",
	"delete a file outside the roots",
	"delete a file inside the roots",
];

/** The attacks (in ATTACK_NAMES' order): each a list of files for one planted record, and the backups beside it. */
function attacks(): Array<{ files: Files; backups?: Record<string, string> }> {
	return [
		{
			files: [
				{
					path: join(outside, "planted.sh"),
					before: { kind: "file", sha256: sha("#!/bin/sh\necho owned\n"), mode: 0o755, backup: "0.before" },
					// Absent now, as after the change: recovery would put the "previous" bytes there.
					after: { kind: "absent" },
				},
			],
			backups: { "0.before": "#!/bin/sh\necho owned\n" },
		},
		{
			files: [
				{
					path: join(root, "stolen.txt"),
					before: {
						kind: "file",
						sha256: sha("outside secret\n"),
						mode: 0o644,
						backup: `../../../../../../../..${join(outside, "secret")}`,
					},
					// Absent now, as after the change: recovery would put the "previous" bytes there.
					after: { kind: "absent" },
				},
			],
		},
		{
			files: [
				{
					path: join(root, ".git", "hooks", "pre-commit"),
					before: { kind: "file", sha256: sha("#!/bin/sh\nevil\n"), mode: 0o755, backup: "0.before" },
					// Absent now, as after the change: recovery would put the "previous" bytes there.
					after: { kind: "absent" },
				},
			],
			backups: { "0.before": "#!/bin/sh\nevil\n" },
		},
		{
			files: [
				{
					path: join(outside, "keep.txt"),
					before: { kind: "absent" },
					after: { kind: "file", sha256: sha("outside, keep me\n") },
				},
			],
		},
		{
			files: [
				{
					path: join(root, "a.txt"),
					before: { kind: "absent" },
					after: { kind: "file", sha256: sha("a\n") },
				},
			],
		},
	];
}

/** Plant a record under `keyDir` as `writer` left it; `seal` turns the intent into the stored text. */
function plant(
	keyDir: string,
	files: Files,
	backups: Record<string, string> | undefined,
	seal: (i: Intent) => string,
	idForm: "old" | "new",
): string {
	const dead = deadPid();
	const id = idForm === "old" ? `m0-${dead}-deadbeef` : `m0-${dead}--deadbeef`;
	const dir = join(keyDir, id);
	mkdirSync(dir, { recursive: true, mode: 0o700 });
	for (const [n, bytes] of Object.entries(backups ?? {})) writeFileSync(join(dir, n), bytes, { mode: 0o600 });
	// A file the change had not reached yet (absent, as before): the record is then replayed
	// backwards, which is what turns the other entries into actions.
	const trigger = {
		path: join(root, "not-yet.txt"),
		before: { kind: "absent" },
		after: { kind: "file", sha256: ZERO },
	};
	const intent = {
		version: 2,
		purpose: "intent",
		pid: dead,
		pidStart: "",
		workspace: root,
		backend: "local",
		roots: [root],
		createdAt: new Date().toISOString(),
		files: [...files, trigger],
		dirs: [root],
	} as unknown as Intent;
	writeFileSync(join(dir, "intent.json"), seal(intent), { mode: 0o600 });
	return dir;
}

/** The key directories this workspace's records are looked for in (older keel's and today's). */
const oldKeyDir = () => join(stateDir, "journal", sha(`local\0${root}`).slice(0, 24));
const keyDir = () => join(stateDir, "journal", journalKey("local", root));

describe("planted records never act: set aside, named, and the session goes on", () => {
	for (const [k, name] of ATTACK_NAMES.entries()) {
		for (const form of [
			"unauthenticated (older keel's form)",
			"sealed with the attacker's own key",
		] as const) {
			it(`${name}: ${form}`, async () => {
				const a = attacks()[k];
				const inRoot = snapshot(root);
				const out = snapshot(outside);
				const seal =
					form === "sealed with the attacker's own key"
						? (i: Intent) => sealRecord(Buffer.alloc(32, 7), i)
						: (i: Intent) => JSON.stringify({ ...i, version: 1 });
				const dir =
					form === "sealed with the attacker's own key"
						? plant(keyDir(), a.files, a.backups, seal, "new")
						: plant(oldKeyDir(), a.files, a.backups, seal, "old");
				const s = await open();
				expect(snapshot(root)).toEqual(inRoot);
				expect(snapshot(outside)).toEqual(out);
				expect(s.recovery).toHaveLength(1);
				expect(s.recovery[0].outcome).toBe("set-aside");
				expect(s.recovery[0].line).toMatch(/^keel: set aside a journal entry .*quarantined-/);
				expect(s.recovery[0].line.split("\n")).toHaveLength(1);
				expect(() => lstatSync(dir)).toThrow();
				// The session works: a multi-file change commits (and journals) as usual.
				const r = await s.call("file", {
					queries: [
						{ type: "write", path: "x.txt", content: "x\n" },
						{ type: "write", path: "y.txt", content: "y\n" },
					],
				});
				expect(r.ok).toBe(true);
			});
		}
	}
});

describe("a record sealed with the user's own key is still held to its roots and the guard", () => {
	const userKey = () => {
		// The key exists once a session needed it.
		return readFileSync(join(stateDir, "record-key"));
	};

	it("a file outside the record's own roots: set aside", async () => {
		await (await open()).call("file", {
			queries: [
				{ type: "write", path: "k1", content: "1" },
				{ type: "write", path: "k2", content: "2" },
			],
		});
		const out = snapshot(outside);
		const a = attacks()[0];
		plant(keyDir(), a.files, a.backups, (i) => sealRecord(userKey(), i), "new");
		const s = await open();
		expect(s.recovery.map((r) => r.outcome)).toEqual(["set-aside"]);
		expect(s.recovery[0].line).toContain("outside its roots");
		expect(snapshot(outside)).toEqual(out);
	});

	it("a backup name that is a path: set aside, nothing read", async () => {
		await (await open()).call("file", {
			queries: [
				{ type: "write", path: "k1", content: "1" },
				{ type: "write", path: "k2", content: "2" },
			],
		});
		const a = attacks()[1];
		plant(keyDir(), a.files, a.backups, (i) => sealRecord(userKey(), i), "new");
		const s = await open();
		expect(s.recovery.map((r) => r.outcome)).toEqual(["set-aside"]);
		expect(() => lstatSync(join(root, "stolen.txt"))).toThrow();
	});

	it("a protected file inside the roots: left for a session allowed to write it, not restored", async () => {
		await (await open()).call("file", {
			queries: [
				{ type: "write", path: "k1", content: "1" },
				{ type: "write", path: "k2", content: "2" },
			],
		});
		const a = attacks()[2];
		const dir = plant(keyDir(), a.files, a.backups, (i) => sealRecord(userKey(), i), "new");
		const s = await open();
		expect(s.recovery.map((r) => r.outcome)).toEqual(["left"]);
		expect(s.recovery[0].unresolved[0].state).toContain("protected");
		expect(() => lstatSync(join(root, ".git", "hooks", "pre-commit"))).toThrow();
		expect(lstatSync(dir).isDirectory()).toBe(true);
	});

	it("a backup whose bytes are not the ones recorded is not put back", async () => {
		await (await open()).call("file", {
			queries: [
				{ type: "write", path: "k1", content: "1" },
				{ type: "write", path: "k2", content: "2" },
			],
		});
		writeFileSync(join(root, "c.txt"), "new c\n");
		const files: Files = [
			{
				path: join(root, "c.txt"),
				before: { kind: "file", sha256: sha("old c\n"), mode: 0o644, backup: "0.before" },
				after: { kind: "file", sha256: sha("new c\n") },
			},
			// Not yet created when the writer died: the change is rolled back, c with it.
			{ path: join(root, "d.txt"), before: { kind: "absent" }, after: { kind: "file", sha256: sha("d\n") } },
		];
		plant(keyDir(), files, { "0.before": "swapped bytes\n" }, (i) => sealRecord(userKey(), i), "new");
		const s = await open();
		expect(s.recovery[0].outcome).toBe("unresolved");
		expect(s.recovery[0].unresolved[0].state).toContain("do not match");
		expect(readFileSync(join(root, "c.txt"), "utf8")).toBe("new c\n");
	});

	it("files of another owner (intent or backup chowned to nobody) are not trusted", async () => {
		if (process.geteuid?.() !== 0) return void console.warn("skipped: needs root to chown");
		await (await open()).call("file", {
			queries: [
				{ type: "write", path: "k1", content: "1" },
				{ type: "write", path: "k2", content: "2" },
			],
		});
		writeFileSync(join(root, "c.txt"), "new c\n");
		const files: Files = [
			{
				path: join(root, "c.txt"),
				before: { kind: "file", sha256: sha("old c\n"), mode: 0o644, backup: "0.before" },
				after: { kind: "file", sha256: sha("new c\n") },
			},
			// Not yet created when the writer died: the change is rolled back, c with it.
			{ path: join(root, "d.txt"), before: { kind: "absent" }, after: { kind: "file", sha256: sha("d\n") } },
		];
		const dir = plant(keyDir(), files, { "0.before": "old c\n" }, (i) => sealRecord(userKey(), i), "new");
		chownSync(join(dir, "0.before"), 65534, 65534);
		let s = await open();
		expect(s.recovery[0].outcome).toBe("unresolved");
		expect(s.recovery[0].unresolved[0].state).toContain("owned by uid 65534");
		expect(readFileSync(join(root, "c.txt"), "utf8")).toBe("new c\n");
		const dir2 = plant(keyDir(), files, { "0.before": "old c\n" }, (i) => sealRecord(userKey(), i), "new");
		chownSync(join(dir2, "intent.json"), 65534, 65534);
		s = await open();
		expect(s.recovery.map((r) => r.outcome)).toEqual(["set-aside"]);
		expect(readFileSync(join(root, "c.txt"), "utf8")).toBe("new c\n");
	});
});

describe("the journal's directories", () => {
	it("a record directory replaced by a link does not stop the session or its multi-file changes", async () => {
		await (await open()).call("file", {
			queries: [
				{ type: "write", path: "k1", content: "1" },
				{ type: "write", path: "k2", content: "2" },
			],
		});
		// The workspace's journal directory becomes a link: to a dangling target, then to an outside directory.
		for (const target of ["/nonexistent/keel-journal", outside]) {
			rmSyncLink(keyDir());
			symlinkSync(target, keyDir());
			const out = snapshot(outside);
			const s = await open();
			expect(s.recovery.map((r) => r.outcome)).toEqual(["set-aside"]);
			const r = await s.call("file", {
				queries: [
					{ type: "write", path: `${target.length}-1.txt`, content: "A\n" },
					{ type: "write", path: `${target.length}-2.txt`, content: "B\n" },
				],
			});
			expect(r.ok, JSON.stringify(r)).toBe(true);
			// The link is gone (set aside); the directory made in its place went with the change's end.
			expect(lstatSync(keyDir(), { throwIfNoEntry: false })).toBeUndefined();
			expect(snapshot(outside)).toEqual(out);
		}
	});

	it("a workspace's journal directory goes with its last change; empty ones are removed at session start", async () => {
		const s = await open();
		const both = await s.call("file", {
			queries: [
				{ type: "write", path: "j1.txt", content: "1\n" },
				{ type: "write", path: "j2.txt", content: "2\n" },
			],
		});
		expect(both.ok, JSON.stringify(both)).toBe(true);
		expect(existsSync(keyDir())).toBe(false);
		// Empty directories other sessions left (this workspace's, another workspace's, older keel's
		// naming): every session start reads them all, so the next start removes them. A directory
		// holding a record set aside stays.
		const other = join(stateDir, "journal", journalKey("local", outside));
		for (const d of [keyDir(), other, oldKeyDir()]) mkdirSync(d, { recursive: true, mode: 0o700 });
		const kept = join(stateDir, "journal", journalKey("local", join(work, "elsewhere")));
		mkdirSync(join(kept, "not-a-record"), { recursive: true, mode: 0o700 });
		const next = await open();
		expect(next.recovery.map((r) => r.outcome)).toEqual(["set-aside"]);
		expect([keyDir(), other, oldKeyDir()].filter((d) => existsSync(d))).toEqual([]);
		expect(existsSync(kept)).toBe(true);
	});

	it("a rival removing the workspace's journal directory over and over never fails a change", async () => {
		const s = await open();
		// What another session's start or end does to an empty journal directory, as fast as a
		// shell can: each change makes it again where it vanished under it.
		const rival = spawn("sh", ["-c", 'while :; do rmdir "$1" 2>/dev/null; done', "sh", keyDir()]);
		try {
			for (let i = 0; i < 60; i++) {
				const r = await s.call("file", {
					queries: [
						{ type: "write", path: `r/${i}-1.txt`, content: `${i} one\n` },
						{ type: "write", path: `r/${i}-2.txt`, content: `${i} two\n` },
					],
				});
				expect(r.ok, JSON.stringify(r)).toBe(true);
			}
		} finally {
			rival.kill("SIGKILL");
		}
		for (let i = 0; i < 60; i++) expect(readFileSync(join(root, `r/${i}-2.txt`), "utf8")).toBe(`${i} two\n`);
	});

	it("a state directory inside a root moves out (one stderr line), and stays unwritable through the tools", async () => {
		const inside = join(root, ".state");
		const lines: string[] = [];
		const write = process.stderr.write.bind(process.stderr);
		process.stderr.write = ((chunk: string) => {
			lines.push(String(chunk));
			return true;
		}) as typeof process.stderr.write;
		let s: Session;
		try {
			s = await Session.create({ root, profile: "unified", stateDir: inside });
			sessions.push(s);
		} finally {
			process.stderr.write = write;
		}
		expect(lines.filter((l) => l.includes(inside))).toHaveLength(1);
		expect(lines.join("")).toMatch(/is inside the root .*; using \/var\/tmp\/keel-state-/);
		const r = await s.call("file", {
			queries: [{ type: "write", path: ".state/journal/x/intent.json", content: "{}" }],
		});
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.error.code).toBe("PATH_PROTECTED");
		const both = await s.call("file", {
			queries: [
				{ type: "write", path: "m.txt", content: "m\n" },
				{ type: "write", path: "n.txt", content: "n\n" },
			],
		});
		expect(both.ok).toBe(true);
		expect(() => lstatSync(inside)).toThrow();
	});
});

function rmSyncLink(p: string) {
	execFileSync("rm", ["-rf", p]);
}
