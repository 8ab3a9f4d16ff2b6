/**
 * The checkpoint helper remote hosts run (src/backend/remote/host/checkpoint*.py), run here with
 * this machine's python3 against a temp directory, no sshd: each run of the program is a helper
 * started again on the same store, so a capture's changes come from the index it left on disk.
 * What it reads back (the index, the blobs) is treated as hostile: a damaged or planted index
 * means a full rescan, a blob that does not hash to its name is missing. The long-lived helper is
 * driven through RemoteTreeSource over a real child process: its non-file restore steps never
 * follow a link planted on the way, and its .gitignore subset decides as the local scan does.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
	chmodSync,
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createExecBackend } from "../../src/backend/exec/index.js";
import { readHostFile } from "../../src/backend/remote/host-programs.js";
import type { ProcessOps, SpawnedProcess } from "../../src/backend/types.js";
import { IgnoreRules } from "../../src/checkpoints/ignore-rules.js";
import { checkpointHelperArgv, RemoteTreeSource } from "../../src/checkpoints/remote-source.js";
import { DEFAULT_BUDGETS } from "../../src/checkpoints/types.js";
import { createSession } from "../../src/index.js";
import { spawnTransport } from "../fixtures/xattrs.js";

let dir: string;
let root: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "keel-cphelper-"));
	root = join(dir, "ws");
	mkdirSync(join(root, "src"), { recursive: true });
	writeFileSync(join(root, "src/a.txt"), "alpha\n");
	writeFileSync(join(root, "keep.txt"), "keep\n");
	mkdirSync(join(dir, "state"), { mode: 0o700 });
	env = { ...process.env, XDG_STATE_HOME: join(dir, "state") };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

type Head = Record<string, unknown> & { data?: Buffer };

/** One run of the helper: the requests on stdin, each reply line (and its bytes) parsed. */
function run(requests: object[]): Head[] {
	const argv = checkpointHelperArgv();
	const r = spawnSync(argv[0], argv.slice(1), {
		input: requests.map((q) => `${JSON.stringify(q)}\n`).join(""),
		env,
		cwd: root,
	});
	expect(r.stderr.toString()).toBe("");
	const out: Head[] = [];
	let buf = r.stdout;
	while (buf.length) {
		const nl = buf.indexOf(10);
		const head = JSON.parse(buf.subarray(0, nl).toString()) as Head;
		const size = (head.size as number | undefined) ?? 0;
		if (size) head.data = buf.subarray(nl + 1, nl + 1 + size);
		buf = buf.subarray(nl + 1 + size);
		out.push(head);
	}
	return out;
}

const open = (store: string | null = null) => ({
	op: "open",
	roots: [root],
	maxFileBytes: DEFAULT_BUDGETS.maxFileBytes,
	maxEntries: DEFAULT_BUDGETS.maxEntries,
	store,
});
const capture = { op: "capture", room: 1 << 30 };
const sha = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");
/** Older than the racy window, so the next scan trusts the identity. */
const settle = () => spawnSync("sleep", ["0.06"]);

function firstRun(): { store: string; storeDir: string } {
	const [o, c] = run([open(), capture]);
	expect(o.ok).toBe(true);
	expect(c).toMatchObject({ ok: true, changes: [], fresh: true });
	return { store: o.store as string, storeDir: o.dir as string };
}

// Each run starts python3: seconds apiece on a loaded machine.
describe("the checkpoint helper on its own", { timeout: 120_000 }, () => {
	it("keeps its store in a private directory of the state, outside the root", () => {
		const { storeDir } = firstRun();
		expect(storeDir.startsWith(join(dir, "state", "keel", "checkpoints", "session-"))).toBe(true);
		expect(statSync(join(dir, "state", "keel", "checkpoints")).mode & 0o777).toBe(0o700);
		expect(statSync(storeDir).mode & 0o777).toBe(0o700);
		expect(readdirSync(join(storeDir, "blobs")).sort()).toEqual([sha("alpha\n"), sha("keep\n")].sort());
	});

	it("a state directory inside the root is not used: the store goes elsewhere", () => {
		env.XDG_STATE_HOME = join(root, "state-in-root");
		const [o] = run([open(), { op: "close" }]);
		expect(o.ok).toBe(true);
		expect((o.dir as string).startsWith(root)).toBe(false);
		expect(existsSync(join(root, "state-in-root", "keel", "checkpoints"))).toBe(false);
	});

	it("a rescan by a helper started again returns only what changed, from the index on the host", () => {
		const { store } = firstRun();
		settle();
		writeFileSync(join(root, "src/a.txt"), "ALPHA\n");
		rmSync(join(root, "keep.txt"));
		mkdirSync(join(root, "new"));
		symlinkSync("src/a.txt", join(root, "new/l"));
		chmodSync(join(root, "src"), 0o700);
		const [o, c, b] = run([open(store), capture, { op: "blob", sha256: sha("alpha\n") }]);
		expect(o).toMatchObject({ ok: true, store, reused: true });
		expect(c.fresh).toBe(false);
		expect(c.changes).toEqual([
			[
				join(root, "keep.txt"),
				{ kind: "file", mode: 0o644, size: 5, sha256: sha("keep\n") },
				{ kind: "absent" },
			],
			[join(root, "new"), { kind: "absent" }, { kind: "dir", mode: 0o755 }],
			[join(root, "new/l"), { kind: "absent" }, { kind: "link", target: "src/a.txt" }],
			[join(root, "src"), { kind: "dir", mode: 0o755 }, { kind: "dir", mode: 0o700 }],
			[
				join(root, "src/a.txt"),
				{ kind: "file", mode: 0o644, size: 6, sha256: sha("alpha\n") },
				{ kind: "file", mode: 0o644, size: 6, sha256: sha("ALPHA\n") },
			],
		]);
		expect(b.data?.toString()).toBe("alpha\n");
		// Nothing changed since: nothing to report.
		settle();
		const [, again] = run([open(store), capture]);
		expect(again.changes).toEqual([]);
	});

	it.each([
		["not JSON", () => "{nope"],
		["other roots", (doc: { roots: string[] }) => JSON.stringify({ ...doc, roots: ["/"] })],
		[
			"a path outside the roots",
			(doc: { entries: unknown[][] }) =>
				JSON.stringify({
					...doc,
					entries: [...doc.entries, ["/etc/passwd", { kind: "dir", mode: 0o755 }, "", false]],
				}),
		],
		[
			"a path climbing out with ..",
			(doc: { entries: unknown[][] }) =>
				JSON.stringify({
					...doc,
					entries: [...doc.entries, [`${root}/../x`, { kind: "dir", mode: 0o755 }, "", false]],
				}),
		],
		[
			"a malformed state",
			(doc: { entries: unknown[][] }) =>
				JSON.stringify({
					...doc,
					entries: doc.entries.map((e) => [e[0], { kind: "file", sha256: "zz" }, e[2], e[3]]),
				}),
		],
	])("a damaged or planted index (%s) means a full rescan, never its claims", (_label, damage) => {
		const { store, storeDir } = firstRun();
		const doc = JSON.parse(readFileSync(join(storeDir, "index.json"), "utf8"));
		writeFileSync(join(storeDir, "index.json"), damage(doc));
		writeFileSync(join(root, "src/a.txt"), "changed\n");
		const [o, c] = run([open(store), capture]);
		expect(o).toMatchObject({ ok: true, reused: false });
		expect(c).toMatchObject({ ok: true, fresh: true, changes: [] });
		// The rescan read the file afresh (its identity was not trusted from the index).
		expect(existsSync(join(storeDir, "blobs", sha("changed\n")))).toBe(true);
	});

	it("an index planted as a link to another file is not read", () => {
		const { store, storeDir } = firstRun();
		const doc = readFileSync(join(storeDir, "index.json"));
		writeFileSync(join(dir, "elsewhere.json"), doc);
		rmSync(join(storeDir, "index.json"));
		symlinkSync(join(dir, "elsewhere.json"), join(storeDir, "index.json"));
		const [, c] = run([open(store), capture]);
		expect(c.fresh).toBe(true);
	});

	it("a blob that does not hash to its name, or is a link, is missing; junk in the store is removed", () => {
		const { store, storeDir } = firstRun();
		const blobs = join(storeDir, "blobs");
		writeFileSync(join(blobs, sha("alpha\n")), "planted\n");
		rmSync(join(blobs, sha("keep\n")));
		writeFileSync(join(dir, "outside"), "keep\n");
		symlinkSync(join(dir, "outside"), join(blobs, sha("keep\n")));
		writeFileSync(join(blobs, "junk"), "x");
		const [, a, k, bad] = run([
			open(store),
			{ op: "blob", sha256: sha("alpha\n") },
			{ op: "blob", sha256: sha("keep\n") },
			{ op: "blob", sha256: "../../x" },
		]);
		expect(a).toMatchObject({ ok: true, found: false });
		expect(k).toMatchObject({ ok: true, found: false });
		expect(bad).toMatchObject({ ok: true, found: false });
		expect(existsSync(join(blobs, "junk"))).toBe(false);
		// A capture of the same bytes writes the blob afresh rather than trusting the planted one.
		settle();
		writeFileSync(join(root, "again.txt"), "alpha\n");
		const [, , again] = run([open(store), capture, { op: "blob", sha256: sha("alpha\n") }]);
		expect(again.data?.toString()).toBe("alpha\n");
	});

	it("a file past maxFileBytes is kept by identity only, its bytes never stored", () => {
		writeFileSync(join(root, "big.bin"), Buffer.alloc(4096, 1));
		const [, c] = run([{ ...open(), maxFileBytes: 1024 }, capture]);
		expect(c.identityOnly).toEqual([join(root, "big.bin")]);
	});

	it("a budget of room keeps files past it by identity only", () => {
		const [, c] = run([open(), { op: "capture", room: 6 }]);
		expect((c.identityOnly as string[]).length).toBe(1);
	});

	it("a name or link target that is not UTF-8 is left out and counted, never mangled", () => {
		writeFileSync(Buffer.from(`${root}/bad-\xff.txt`, "latin1"), "x");
		symlinkSync(Buffer.from("to-\xff", "latin1"), join(root, "odd-link"));
		const [, c] = run([open(), capture]);
		expect(c.leftOutCount).toBe(2);
		expect(c.leftOut).toContain(join(root, "odd-link"));
	});

	it("a link to a directory outside is recorded as a link, never walked; a FIFO never blocks the scan", () => {
		mkdirSync(join(dir, "outside"));
		writeFileSync(join(dir, "outside", "secret"), "s");
		symlinkSync(join(dir, "outside"), join(root, "hop"));
		spawnSync("mkfifo", [join(root, "pipe")]);
		const { storeDir } = firstRun();
		const index = JSON.parse(readFileSync(join(storeDir, "index.json"), "utf8")) as { entries: unknown[][] };
		const byPath = new Map(index.entries.map((e) => [e[0], e[1]]));
		expect(byPath.get(join(root, "hop"))).toEqual({ kind: "link", target: join(dir, "outside") });
		expect(byPath.get(join(root, "pipe"))).toEqual({ kind: "other" });
		expect([...byPath.keys()].some((p) => String(p).startsWith(join(root, "hop/")))).toBe(false);
		expect(readdirSync(join(storeDir, "blobs"))).not.toContain(sha("s"));
	});

	it("a racer swapping a directory for a link to outside while captures run never gets outside bytes kept", () => {
		mkdirSync(join(dir, "outside"));
		writeFileSync(join(dir, "outside", "a.txt"), "outside secret\n");
		// System calls in a loop, not processes: the swaps interleave with every step of the walk.
		const racer = spawn(
			"python3",
			[
				"-c",
				"import os, sys\nwhile True:\n    os.rename('src', 'src.real'); os.symlink(sys.argv[1], 'src'); os.unlink('src'); os.rename('src.real', 'src')",
				join(dir, "outside"),
			],
			{ cwd: root, stdio: "ignore" },
		);
		try {
			const replies = run([open(), ...Array.from({ length: 200 }, () => capture)]);
			expect(replies.every((r) => r.ok)).toBe(true);
			const storeDir = replies[0].dir as string;
			expect(readdirSync(join(storeDir, "blobs"))).not.toContain(sha("outside secret\n"));
			const seen = replies.flatMap((r) => (r.changes as unknown[][] | undefined) ?? []);
			expect(seen.some((c) => JSON.stringify(c).includes("outside secret"))).toBe(false);
			expect(seen.some((c) => String(c[0]).startsWith(join(dir, "outside")))).toBe(false);
		} finally {
			racer.kill("SIGKILL");
		}
	});

	it("the walk stops at maxEntries and says so", () => {
		const [, c] = run([{ ...open(), maxEntries: 2 }, capture]);
		expect(c.truncated).toBe(true);
	});

	it("close removes the store", () => {
		const [o] = run([open(), capture, { op: "close" }]);
		expect(existsSync(o.dir as string)).toBe(false);
	});

	it("a bad request is a structured error and changes nothing", () => {
		const [, a, b, c] = run([
			open(),
			{ op: "makeDir", path: "/etc/keel-nope", mode: 0o755 },
			{ op: "makeDir", path: `${root}/../escape`, mode: 0o755 },
			{ op: "frobnicate" },
		]);
		expect(a).toMatchObject({ ok: false, code: "EINVAL" });
		expect(b).toMatchObject({ ok: false, code: "EINVAL" });
		expect(c).toMatchObject({ ok: false, code: "EINVAL" });
		expect(existsSync(join(dir, "escape"))).toBe(false);
	});
});

/** Real child processes on this machine, as a remote backend's ProcessOps would start them there. */
function childProcesses(): ProcessOps {
	return {
		fdPipes: false,
		ready: async () => {},
		spawn: (req): SpawnedProcess => {
			const child = spawn(req.argv[0], req.argv.slice(1), { cwd: req.cwd, env, stdio: "pipe" });
			const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
				child.on("close", (code, signal) => resolve({ code, signal })),
			);
			return {
				pid: child.pid,
				stdin: child.stdin,
				stdout: child.stdout,
				stderr: child.stderr,
				exited,
				kill: () => child.kill("SIGKILL"),
				setRef: () => {},
			};
		},
	};
}

describe("RemoteTreeSource over the helper", { timeout: 120_000 }, () => {
	let source: RemoteTreeSource;
	beforeEach(async () => {
		source = await RemoteTreeSource.open(childProcesses(), [root], DEFAULT_BUDGETS);
	}, 60_000);
	afterEach(() => source.close());

	it("captures what changed between calls, and hands back kept bytes checked against their hash", async () => {
		expect((await source.capture(1 << 30)).changes).toEqual([]);
		expect(source.storeBytes()).toBe(11);
		writeFileSync(join(root, "src/a.txt"), "beta\n");
		const c = await source.capture(1 << 30);
		expect(c.changes.map((x) => x.path)).toEqual([join(root, "src/a.txt")]);
		expect((await source.blob(sha("alpha\n")))?.toString()).toBe("alpha\n");
		expect(await source.blob(sha("never\n"))).toBeNull();
		await source.retain(new Set());
		// Not needed by a checkpoint nor by the latest scan: dropped.
		expect(await source.blob(sha("alpha\n"))).toBeNull();
		expect((await source.blob(sha("beta\n")))?.toString()).toBe("beta\n");
	});

	it("a blob of several megabytes comes back whole, in order with the replies around it", async () => {
		const big = Buffer.alloc(3 * 1024 * 1024 + 7);
		for (let i = 0; i < big.length; i++) big[i] = (i * 131) % 251;
		writeFileSync(join(root, "big.bin"), big);
		await source.capture(1 << 30);
		const [a, b, c] = await Promise.all([
			source.blob(sha("alpha\n")),
			source.blob(sha(big)),
			source.blob(sha("keep\n")),
		]);
		expect(a?.toString()).toBe("alpha\n");
		expect(b?.equals(big)).toBe(true);
		expect(c?.toString()).toBe("keep\n");
	});

	it("restore steps never follow a link planted on the way out of the root", async () => {
		mkdirSync(join(dir, "outside"));
		symlinkSync(join(dir, "outside"), join(root, "hop"));
		writeFileSync(join(dir, "outside", "f"), "x");
		chmodSync(join(dir, "outside", "f"), 0o644);
		const codes: string[] = [];
		const attempt = async (step: Promise<void>) => {
			await step.catch((e: NodeJS.ErrnoException) => codes.push(String(e.code)));
		};
		await attempt(source.makeDir(join(root, "hop/made"), 0o755));
		await attempt(source.makeLink(join(root, "hop/l"), "/etc"));
		await attempt(source.setMode(join(root, "hop/f"), 0o777));
		await attempt(source.setMode(join(root, "hop"), 0o700));
		expect(codes).toEqual(["ENOTDIR", "ENOTDIR", "ENOTDIR", "ELOOP"]);
		expect(readdirSync(join(dir, "outside"))).toEqual(["f"]);
		expect(statSync(join(dir, "outside", "f")).mode & 0o777).toBe(0o644);
		expect(statSync(join(dir, "outside")).mode & 0o777).not.toBe(0o700);
		// The same steps inside the root work.
		await source.makeDir(join(root, "src/made"), 0o700);
		await source.makeLink(join(root, "src/l"), "a.txt");
		await source.setMode(join(root, "src/a.txt"), 0o600);
		await source.removeDir(join(root, "src/made"));
		expect(lstatSync(join(root, "src/l")).isSymbolicLink()).toBe(true);
		expect(statSync(join(root, "src/a.txt")).mode & 0o777).toBe(0o600);
		expect(existsSync(join(root, "src/made"))).toBe(false);
	});

	it("a helper that died is started again on the same store, and the next capture still sees the change", async () => {
		await source.capture(1 << 30);
		settle();
		const helper = (source as unknown as { helper: { kill(): void; dead?: Error } }).helper;
		helper.kill();
		await new Promise((r) => setTimeout(r, 100));
		writeFileSync(join(root, "keep.txt"), "changed while no helper ran\n");
		const c = await source.capture(1 << 30);
		expect(c.changes.map((x) => x.path)).toEqual([join(root, "keep.txt")]);
		expect((await source.blob(sha("keep\n")))?.toString()).toBe("keep\n");
	});
});

describe("the helper's .gitignore subset decides as the local scan does", () => {
	const CASES: Array<[string, string, boolean]> = [
		// [gitignore, path relative to it, is a directory]
		["*.log", "out.log", false],
		["*.log", "deep/er/out.log", false],
		["*.log\n!keep.log", "keep.log", false],
		["/build", "build", true],
		["/build", "sub/build", true],
		["build/", "build", false],
		["build/", "x/build", true],
		["doc/*.txt", "doc/a.txt", false],
		["doc/*.txt", "doc/sub/a.txt", false],
		["**/tmp", "a/b/tmp", true],
		["a/**/z", "a/z", false],
		["a/**/z", "a/b/c/z", false],
		["logs/**", "logs/x", false],
		["?.c", "ab.c", false],
		["?.c", "a.c", false],
		["[abc].md", "b.md", false],
		["[!abc].md", "b.md", false],
		["# comment\n\n*.o  ", "x.o", false],
		["\\#hash", "#hash", false],
		["foo", "a/foo", true],
	];

	/** The program's verdict on every case, from one python3 run. */
	let verdicts: boolean[] = [];
	beforeAll(() => {
		const program = `${readHostFile("checkpoint_ignore.py")}\nfor t, rel, d in json.loads(sys.argv[1]):\n    print(left_out([("", ignore_rules(t))], rel, rel.split("/")[-1], d))\n`;
		const r = spawnSync("python3", ["-I", "-S", "-c", program, JSON.stringify(CASES)], { encoding: "utf8" });
		expect(r.stderr).toBe("");
		verdicts = r.stdout
			.trim()
			.split("\n")
			.map((l) => l === "True");
	});

	it.each(CASES.map((c, i) => [...c, i] as const))("%j on %s (dir %s)", (text, rel, isDir, i) => {
		const local = IgnoreRules.empty().child("", text).leavesOut(rel, rel.split("/").at(-1)!, isDir);
		expect(verdicts[i]).toBe(local);
	});
});

describe("backends without the helper", () => {
	it("a bare exec transport refuses checkpoints with UNSUPPORTED, before anything is scanned", async () => {
		const backend = createExecBackend({ transport: spawnTransport() });
		await expect(
			createSession({ root, backend, stateDir: join(dir, "local-state"), checkpoints: true }),
		).rejects.toMatchObject({ code: "UNSUPPORTED" });
		expect(existsSync(join(dir, "state", "keel"))).toBe(false);
	});
});
