/**
 * A replace never cuts off another process writing the file. A real python3 process keeps the file
 * open (O_APPEND) and appends to it, as a log or a dev server's output does; an edit, a `file`
 * edit and a whole-file write through keel meanwhile must be refused with a retryable FILE_BUSY
 * naming the writer, and every line the writer wrote must be in the file afterwards (after a
 * replace, its writes would go to the replaced file and be lost). Variants: the writer opens the
 * file after the edit was planned, right before the commit; it opens the file in the last moment
 * before the swap (its open waits on keel's lease: the file must be put back for it); a writer
 * that opens, appends and closes in a loop while edits commit (every line it wrote and every edit
 * reported done must be there). Once the writer has closed the file, the edit lands.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Backend } from "../../src/backend/types.js";
import type { CallResult, Session } from "../../src/session.js";
import { waitFor } from "../fixtures/processes.js";
import { useWorkspace } from "../fixtures/workspace.js";

const PY = "/usr/bin/python3";
const BEFORE = 50;
const TOTAL = 114;

// Each test opens its session itself, on the backend it races.
const ws = useWorkspace({ prefix: "keel-writer-", files: { "app.log": "header v0\n" }, session: false });
/** The file the other process holds open. */
const appLog = () => ws().path("app.log");

/**
 * python3 opening `path` O_WRONLY|O_APPEND and writing lines 0..first-1; `more()` makes it write
 * the rest up to `total`, close the file and exit.
 */
async function appender(first: number, total: number): Promise<{ pid: number; more: () => Promise<void> }> {
	const child: ChildProcess = spawn(PY, [
		"-c",
		[
			"import os,sys",
			"fd=os.open(sys.argv[1], os.O_WRONLY|os.O_APPEND)",
			"n,total=int(sys.argv[2]),int(sys.argv[3])",
			"for i in range(n): os.write(fd, b'line %d\\n' % i)",
			"print('ready', flush=True)",
			"sys.stdin.readline()",
			"for i in range(n,total): os.write(fd, b'line %d\\n' % i)",
			"os.close(fd)",
		].join("\n"),
		appLog(),
		String(first),
		String(total),
	]);
	const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
	await new Promise<void>((resolve, reject) => {
		child.stdout?.once("data", () => resolve());
		child.once("error", reject);
		child.once("exit", () => reject(new Error("the appender exited early")));
	});
	return {
		pid: child.pid as number,
		more: async () => {
			child.stdin?.end("go\n");
			await exited;
		},
	};
}

/** Wait (synchronously: the commit is mid-swap) until `pid` is blocked opening a leased file. */
function waitUntilBlockedOnLease(pid: number): void {
	const until = Date.now() + 20_000;
	const pause = new Int32Array(new SharedArrayBuffer(4));
	while (Date.now() < until) {
		try {
			if (readFileSync(`/proc/${pid}/wchan`, "utf8").includes("break_lease")) return;
		} catch {}
		Atomics.wait(pause, 0, 0, 2);
	}
	throw new Error(`pid ${pid} never blocked on the lease`);
}

const allLines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}\n`).join("");

type Tool = "edit" | "file" | "write";
const profileOf = { edit: "pi", file: "unified", write: "pi" } as const;
const change = (s: Session, tool: Tool): Promise<CallResult> => {
	const edits = [{ oldText: "header v0", newText: "header v1" }];
	if (tool === "edit") return s.call("edit", { path: "app.log", edits });
	if (tool === "file") return s.call("file", { queries: [{ type: "edit", path: "app.log", edits }] });
	return s.call("write", { path: "app.log", content: "header v1\n" });
};

/** A retryable FILE_BUSY about app.log, naming the writer `pid` when given. */
function expectBusy(r: CallResult, pid?: number): void {
	expect(r.ok, JSON.stringify(r)).toBe(false);
	if (r.ok) return;
	expect(r.error.code).toBe("FILE_BUSY");
	expect(r.error.retry).toBe("retry");
	if (pid !== undefined) expect(r.error.message).toContain(`pid ${pid} (python3)`);
	expect(r.error.message).toContain("app.log");
}

describe.skipIf(!existsSync(PY))(
	`a process writing the file while keel replaces it${existsSync(PY) ? "" : " (skipped: no /usr/bin/python3)"}`,
	() => {
		describe.each(["edit", "file", "write"] as const)("%s", (tool) => {
			it("holding it open and appending: refused with FILE_BUSY naming it; every line kept; lands after it closes", async () => {
				const s = await ws().open({
					backend: createLocalBackend(),
					profile: profileOf[tool],
				});
				const writer = await appender(BEFORE, TOTAL);
				if (tool === "write") expect((await s.call("read", { path: "app.log" })).ok).toBe(true);
				expectBusy(await change(s, tool), writer.pid);
				await writer.more();
				expect(await readFile(appLog(), "utf8")).toBe(`header v0\n${allLines(TOTAL)}`);
				if (tool === "write") expect((await s.call("read", { path: "app.log" })).ok).toBe(true);
				const r = await change(s, tool);
				expect(r.ok, JSON.stringify(r)).toBe(true);
				const want = tool === "write" ? "header v1\n" : `header v1\n${allLines(TOTAL)}`;
				expect(await readFile(appLog(), "utf8")).toBe(want);
			});
		});

		it("opening it after the edit was planned, right before the commit: refused, every line kept", async () => {
			let writer: Awaited<ReturnType<typeof appender>> | undefined;
			const backend: Backend = createLocalBackend({
				hooks: {
					beforeCommit: async (target) => {
						if (target === appLog() && !writer) writer = await appender(BEFORE, TOTAL);
					},
				},
			});
			const s = await ws().open({ backend, profile: "pi" });
			const r = await change(s, "edit");
			expect(writer).toBeDefined();
			expectBusy(r, writer?.pid as number);
			await writer?.more();
			expect(await readFile(appLog(), "utf8")).toBe(`header v0\n${allLines(TOTAL)}`);
			expect((await readdir(ws().root)).sort()).toEqual(["app.log"]);
		});

		it("opening it in the last moment before the swap: the file is put back for it, refused, its line kept", async () => {
			let late: ChildProcess | undefined;
			const backend: Backend = createLocalBackend({
				hooks: {
					beforeSwap: (target) => {
						if (target !== appLog() || late) return;
						// A writer whose open reaches the file after the lease's last look, before the swap.
						late = spawn(PY, [
							"-c",
							"import os,sys\nfd=os.open(sys.argv[1], os.O_WRONLY|os.O_APPEND)\nos.write(fd, b'late line\\n')\nos.close(fd)",
							appLog(),
						]);
						waitUntilBlockedOnLease(late.pid as number);
					},
				},
			});
			const s = await ws().open({ backend, profile: "pi" });
			const r = await change(s, "edit");
			expect(late).toBeDefined();
			// Its open was still under way: it had no descriptor to be named by.
			expectBusy(r);
			const child = late as ChildProcess;
			if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
			expect(child.exitCode).toBe(0);
			expect(await readFile(appLog(), "utf8")).toBe("header v0\nlate line\n");
			expect((await readdir(ws().root)).sort()).toEqual(["app.log"]);
		});

		it("opening, appending and closing in a loop while edits commit: every line and every edit reported done is there", async () => {
			const SLOTS = 12;
			await writeFile(appLog(), Array.from({ length: SLOTS }, (_, i) => `slot ${i} v0\n`).join(""));
			const loop = spawn(PY, [
				"-c",
				[
					"import os,sys,select,time",
					"n=0",
					"while not select.select([sys.stdin],[],[],0)[0]:",
					"    fd=os.open(sys.argv[1], os.O_WRONLY|os.O_APPEND)",
					"    time.sleep(0.002)",
					"    os.write(fd, b'w %d\\n' % n)",
					"    os.close(fd)",
					"    n+=1",
					"    time.sleep(0.002)",
					"print(n, flush=True)",
				].join("\n"),
				appLog(),
			]);
			let written = "";
			loop.stdout.setEncoding("utf8").on("data", (d: string) => {
				written += d;
			});
			const exited = new Promise<void>((resolve) => loop.once("exit", () => resolve()));
			// The edits start once the loop has written: under load python's start can outlast all
			// twelve edits, and then nothing raced them.
			const looping = await waitFor(() => readFileSync(appLog(), "utf8").includes("w 0\n"), 20_000);
			expect(looping, "the writing loop never wrote").toBe(true);
			const s = await ws().open({ backend: createLocalBackend(), profile: "pi" });
			const results: CallResult[] = [];
			try {
				for (let i = 0; i < SLOTS; i++) {
					results.push(
						await s.call("edit", {
							path: "app.log",
							edits: [{ oldText: `slot ${i} v0`, newText: `slot ${i} v1` }],
						}),
					);
				}
			} finally {
				await s.close();
				loop.stdin.end("stop\n");
				await exited;
			}
			const n = Number(written.trim());
			expect(n).toBeGreaterThan(0);
			const final = new Set((await readFile(appLog(), "utf8")).split("\n"));
			const missing = Array.from({ length: n }, (_, k) => `w ${k}`).filter((l) => !final.has(l));
			expect(missing).toEqual([]);
			results.forEach((r, i) => {
				if (!r.ok) expect(["FILE_BUSY", "CHANGED_ON_DISK"]).toContain(r.error.code);
				expect(final.has(`slot ${i} ${r.ok ? "v1" : "v0"}`)).toBe(true);
			});
		}, 60_000);
	},
);
