/**
 * Check-then-use races on directory components, as an
 * attacker runs them: a swapper exchanges a workspace directory with a symlink to a directory
 * outside the roots (renameat2 RENAME_EXCHANGE, in a tight loop) while every file tool works on
 * paths below the swapped component. Nothing outside may be returned, created, changed or deleted.
 *
 * The swapper runs as a host process (local backend), and from inside the sandbox through the
 * `bash` and `python` tools (bwrap backend), where the swapped link points at host files the
 * sandbox cannot see.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import {
	lstat,
	mkdir,
	mkdtemp,
	readdir,
	readFile,
	realpath,
	rename,
	rm,
	symlink,
	writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import { createLocalFs } from "../../src/backend/local/fs.js";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Backend } from "../../src/backend/types.js";
import { type CallResult, Session } from "../../src/session.js";
import { bwrapAvailable } from "../contract/backends.js";
import { NO_PYTHON, PYTHON } from "../python/helpers.js";

/** Marker in every file outside the roots, and the name only the outside directory has. */
const SECRET = "SECRETBYTES";
const SECRET_NAME = "secret-name.txt";
const CALLS = 500;

/** Exchanges argv[1] and argv[2] until argv[3] exists; prints how many exchanges it made. */
const SWAPPER = `
import ctypes, os, sys, platform
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b, stop = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3]
if hasattr(libc, "renameat2"):
    swap = lambda: libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
else:
    nr = {"x86_64": 316, "aarch64": 276}[platform.machine()]
    swap = lambda: libc.syscall(nr, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
n = 0
while not os.path.exists(stop):
    for _ in range(200):
        if swap() != 0:
            raise OSError(ctypes.get_errno(), "renameat2")
        n += 1
if n % 2:
    swap()
    n += 1
print("swaps", n, flush=True)
`;

let scratch: string;
let root: string;
let elsewhere: string;
let stopFile: string;

beforeEach(async () => {
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-race-")));
	root = join(scratch, "root");
	elsewhere = join(scratch, "elsewhere");
	stopFile = join(root, ".stop");
	// root/a/sub is the real directory; root/lnk -> elsewhere, whose sub/ has the same names.
	for (const [dir, body] of [
		[join(root, "a", "sub"), "INSIDE"],
		[join(elsewhere, "sub"), SECRET],
	] as const) {
		await mkdir(dir, { recursive: true });
		await writeFile(join(dir, "file.txt"), `${body} file\n`);
		await writeFile(join(dir, "edit.txt"), "v0\n");
		for (let i = 0; i < CALLS; i++) await writeFile(join(dir, `del-${i}.txt`), `${body} victim\n`);
	}
	await writeFile(join(elsewhere, "sub", SECRET_NAME), `${SECRET}\n`);
	await writeFile(join(root, "src.txt"), "copied content\n");
	await symlink(elsewhere, join(root, "lnk"));
});
afterEach(async () => {
	await rm(scratch, { recursive: true, force: true });
});

/** Every entry below `dir` with its type, size, mtime and content hash. */
async function snapshot(dir: string): Promise<Map<string, string>> {
	const out = new Map<string, string>();
	const walk = async (d: string) => {
		for (const name of (await readdir(d)).sort()) {
			const p = join(d, name);
			const st = await lstat(p, { bigint: true });
			let hash = "";
			if (st.isFile())
				hash = createHash("sha256")
					.update(await readFile(p))
					.digest("hex");
			out.set(p, `${st.mode}:${st.size}:${st.mtimeNs}:${hash}`);
			if (st.isDirectory()) await walk(p);
		}
	};
	await walk(dir);
	return out;
}

function allText(r: CallResult): string {
	return JSON.stringify(r);
}

/** Runs the tools while a swapper runs; returns every result and per-tool success counts. */
async function battery(
	pi: Session,
	unified: Session,
): Promise<{ leaks: string[]; ok: Record<string, number> }> {
	const leaks: string[] = [];
	const ok: Record<string, number> = {};
	const src = await unified.call("file", {
		queries: [{ type: "write", path: "copy-src.txt", content: "ref\n" }],
	});
	expect(src.ok).toBe(true);
	const contentRef = src.ok ? /contentRef (cr_\w+)/.exec(allText(src))![1] : "";
	let editFrom = "v0";
	const loops: Record<string, (i: number) => Promise<CallResult>> = {
		read: (i) => pi.call("read", { path: i % 2 ? "a/sub/file.txt" : "a/sub/../sub/file.txt" }),
		write: (i) => pi.call("write", { path: `a/sub/w-${i}.txt`, content: "written\n" }),
		edit: async () => {
			const next = editFrom === "v0" ? "v1" : "v0";
			const r = await pi.call("edit", {
				path: "a/sub/edit.txt",
				edits: [{ oldText: editFrom, newText: next }],
			});
			if (r.ok) editFrom = next;
			return r;
		},
		ls: () => pi.call("ls", { path: "a/sub" }),
		find: () => pi.call("find", { pattern: "*", path: "a/sub" }),
		grep: () => pi.call("grep", { pattern: "e", path: "a/sub" }),
		grepFile: () => pi.call("grep", { pattern: "file", path: "a/sub/file.txt" }),
		delete: (i) => unified.call("file", { queries: [{ type: "delete", path: `a/sub/del-${i}.txt` }] }),
		copy: (i) => unified.call("file", { queries: [{ type: "write", path: `a/sub/c-${i}.txt`, contentRef }] }),
	};
	await Promise.all(
		Object.entries(loops).map(async ([name, call]) => {
			ok[name] = 0;
			for (let i = 0; i < CALLS; i++) {
				const r = await call(i);
				const t = allText(r);
				if (t.includes(SECRET) || t.includes(SECRET_NAME)) leaks.push(`${name} #${i}: ${t.slice(0, 300)}`);
				if (r.ok) ok[name]++;
			}
		}),
	);
	return { leaks, ok };
}

async function noTempsLeft(dir: string): Promise<string[]> {
	const found: string[] = [];
	for (const [p] of await snapshot(dir)) if (p.includes(".keel-tmp-")) found.push(p);
	return found;
}

async function expectContained(before: Map<string, string>, result: Awaited<ReturnType<typeof battery>>) {
	expect(result.leaks).toEqual([]);
	expect(await snapshot(elsewhere)).toEqual(before);
	expect(await noTempsLeft(elsewhere)).toEqual([]);
	// The battery did real work inside the roots, not only fail.
	for (const name of ["read", "write", "ls", "delete", "copy"]) {
		expect(result.ok[name], `${name} never succeeded: ${JSON.stringify(result.ok)}`).toBeGreaterThan(0);
	}
}

function startHostSwapper(): { proc: ChildProcess; output: Promise<string> } {
	const proc = spawn(PYTHON!, ["-c", SWAPPER, join(root, "a"), join(root, "lnk"), stopFile], {
		stdio: ["ignore", "pipe", "pipe"],
	});
	let out = "";
	proc.stdout!.on("data", (c) => {
		out += c;
	});
	proc.stderr!.on("data", (c) => {
		out += c;
	});
	return { proc, output: new Promise((resolve) => proc.on("close", () => resolve(out))) };
}

async function waitForSwaps(): Promise<void> {
	// The swapper is running once root/a has been seen as the link at least once.
	const deadline = Date.now() + 20_000;
	while (Date.now() < deadline) {
		if ((await lstat(join(root, "a")).catch(() => undefined))?.isSymbolicLink()) return;
		await new Promise((r) => setTimeout(r, 5));
	}
	throw new Error("the swapper never swapped");
}

async function sessions(backend: () => Backend): Promise<[Session, Session]> {
	const spillDir = join(scratch, "spill");
	const pi = await Session.create({ root, backend: backend(), spillDir });
	const unified = await Session.create({ root, backend: backend(), spillDir, profile: "unified" });
	return [pi, unified];
}

describe.skipIf(NO_PYTHON)("a directory swapped for a link to outside, while the tools run", () => {
	it("local backend, host swapper: nothing outside is read, created, changed or deleted", async () => {
		const before = await snapshot(elsewhere);
		const [pi, unified] = await sessions(() => createLocalBackend());
		const swapper = startHostSwapper();
		try {
			await waitForSwaps();
			const result = await battery(pi, unified);
			await writeFile(stopFile, "");
			expect(await swapper.output).toMatch(/swaps \d+/);
			await expectContained(before, result);
		} finally {
			swapper.proc.kill("SIGKILL");
			await pi.close();
			await unified.close();
		}
	}, 180_000);
});

const bwrap = await bwrapAvailable();
const why = bwrap === true ? (NO_PYTHON ? "python3 not found" : undefined) : bwrap;

describe.skipIf(why !== undefined)(
	`bwrap backend, swapper inside the sandbox${why ? ` (skipped: ${why})` : ""}`,
	() => {
		const make = () => createBwrapBackend({ roots: [root] });
		const swapArgs = () => [join(root, "a"), join(root, "lnk"), stopFile];

		it("started by the bash tool: nothing outside is read, created, changed or deleted", async () => {
			const before = await snapshot(elsewhere);
			const [pi, unified] = await sessions(make);
			await writeFile(join(root, "swapper.py"), SWAPPER);
			const running = pi.call("bash", { command: `python3 swapper.py ${swapArgs().join(" ")}` });
			try {
				await waitForSwaps();
				const result = await battery(pi, unified);
				await writeFile(stopFile, "");
				expect(allText(await running)).toMatch(/swaps \d+/);
				await expectContained(before, result);
			} finally {
				await writeFile(stopFile, "");
				await running;
				await pi.close();
				await unified.close();
			}
		}, 180_000);

		it("started by the python tool: nothing outside is read, created, changed or deleted", async () => {
			const before = await snapshot(elsewhere);
			const [pi, unified] = await sessions(make);
			const code = `import sys\nsys.argv = ["swapper", ${swapArgs()
				.map((a) => JSON.stringify(a))
				.join(", ")}]\n${SWAPPER}`;
			const running = unified.call("python", { code });
			try {
				await waitForSwaps();
				const result = await battery(pi, unified);
				await writeFile(stopFile, "");
				await running;
				// The swapper stopped (it may have been moved to the background after 15 s).
				const deadline = Date.now() + 20_000;
				while (Date.now() < deadline && (await lstat(join(root, "a"))).isSymbolicLink()) {
					await new Promise((r) => setTimeout(r, 20));
				}
				await expectContained(before, result);
			} finally {
				await writeFile(stopFile, "");
				await running;
				await pi.close();
				await unified.close();
			}
		}, 180_000);
	},
);

// Keep the fixture's own invariants honest: the swapped pair starts as directory + link.
it("the race fixture starts with a real directory and a link to outside", async () => {
	expect((await lstat(join(root, "a"))).isDirectory()).toBe(true);
	expect((await lstat(join(root, "lnk"))).isSymbolicLink()).toBe(true);
	expect(existsSync(join(root, "lnk", "sub", SECRET_NAME))).toBe(true);
});

// read's streamed window (files over 16 MB) opens through the pinned directory like readFile: a
// directory swapped for a link to outside after the roots were pinned is not followed.
it("readWindow through a swapped directory reads nothing outside", async () => {
	const fs = createLocalFs();
	fs.pinRoots([root]);
	try {
		const window = { startLine: 1, maxLines: 10, maxBytes: 4096, maxLineBytes: 4096 };
		const path = join(root, "a", "sub", "file.txt");
		// Control: before the swap the window is the inside file.
		const inside = await fs.readWindow(path, undefined, window);
		expect(inside.lines.map((l) => l.toString())).toEqual(["INSIDE file"]);
		// The same exchange the swapper makes, once: root/a is now the link to outside.
		await rename(join(root, "a"), join(scratch, "a-real"));
		await rename(join(root, "lnk"), join(root, "a"));
		const after = await fs.readWindow(path, undefined, window).then(
			(w) => w.lines.map((l) => l.toString()).join("\n"),
			(e: Error) => `refused: ${e.message}`,
		);
		expect(after).not.toContain(SECRET);
		expect(after).toMatch(/^refused: /);
	} finally {
		fs.close();
	}
});
