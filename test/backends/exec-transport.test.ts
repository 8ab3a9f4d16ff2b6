/**
 * The exec backend's own faults and edges: a transport that does not kill on
 * abort (docker exec), a transport that dies mid-write, an unreachable target, a target without
 * GNU tools or without rg/fd, odd file names. The "target" is this machine through plain spawn.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createExecBackend } from "../../src/backend/exec/index.js";
import type { ExecTransport } from "../../src/backend/exec/transport.js";
import { createJsSearch } from "../../src/backend/search/index.js";
import type { Backend, GrepRequest } from "../../src/backend/types.js";
import { processesWith, sha256, waitFor } from "../contract/harness.js";
import { useWorkspace } from "../fixtures/workspace.js";

// The transport is tested on the workspace root; the one session is opened by its test.
const ws = useWorkspace({ prefix: "keel-exec-", session: false });

/**
 * Runs argv on this machine, like `docker exec`: aborting the call ends the call but leaves the
 * process running (the docker client dies, the process in the container does not).
 */
const dockerLike: ExecTransport = (argv, o) =>
	new Promise((resolve, reject) => {
		const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ["pipe", "pipe", "pipe"] });
		child.stdin.on("error", () => {});
		if (o.stdin instanceof Uint8Array) child.stdin.end(o.stdin);
		else if (o.stdin) o.stdin.pipe(child.stdin);
		else child.stdin.end();
		child.stdout.on("data", (c: Buffer) => o.onData?.(c, "stdout"));
		child.stderr.on("data", (c: Buffer) => o.onData?.(c, "stderr"));
		const onAbort = () => {
			child.stdout.destroy();
			child.stderr.destroy();
			child.unref();
			resolve({ exitCode: null });
		};
		o.signal?.addEventListener("abort", onAbort, { once: true });
		child.on("error", reject);
		child.on("close", (code) => {
			o.signal?.removeEventListener("abort", onAbort);
			resolve({ exitCode: code });
		});
	});

async function run(
	backend: Backend,
	command: string,
	extra: { signal?: AbortSignal; timeoutMs?: number; env?: Record<string, string> } = {},
) {
	let output = "";
	const r = await backend.exec.run({
		command,
		cwd: ws().root,
		onData: (c) => (output += c.toString()),
		...extra,
	});
	return { ...r, output };
}

describe("exec backend: commands", () => {
	it("abort kills the remote process group with a second call when the transport does not", async () => {
		const b = createExecBackend({ transport: dockerLike });
		const marker = `keel-exec-abort-${randomBytes(6).toString("hex")}`;
		const ac = new AbortController();
		setTimeout(() => ac.abort(), 500);
		const t0 = Date.now();
		const r = await run(b, `sh -c 'sleep 299; :' ${marker} & sh -c 'sleep 299; :' ${marker}`, {
			signal: ac.signal,
		});
		expect(r.aborted).toBe(true);
		expect(Date.now() - t0).toBeLessThan(5000);
		expect(
			await waitFor(() => processesWith(marker).length === 0, 5000),
			processesWith(marker).join("\n"),
		).toBe(true);
	});

	it("timeout kills the remote group and reports timedOut", async () => {
		const b = createExecBackend({ transport: dockerLike });
		const marker = `keel-exec-timeout-${randomBytes(6).toString("hex")}`;
		const r = await run(b, `echo begun; sh -c 'sleep 299; :' ${marker}`, { timeoutMs: 700 });
		expect(r.timedOut).toBe(true);
		expect(r.exitCode).toBeNull();
		expect(r.output).toBe("begun\n");
		expect(await waitFor(() => processesWith(marker).length === 0, 5000)).toBe(true);
	});

	it("exit status, cwd, env and background jobs ending with the command", async () => {
		const b = createExecBackend({ transport: dockerLike });
		const marker = `keel-exec-bg-${randomBytes(6).toString("hex")}`;
		const r = await run(b, `pwd; echo "$GREETING"; sh -c 'sleep 299; :' ${marker} & exit 7`, {
			env: { GREETING: "hi there" },
		});
		expect(r.exitCode).toBe(7);
		expect(r.output).toBe(`${ws().root}\nhi there\n`);
		expect(await waitFor(() => processesWith(marker).length === 0, 5000)).toBe(true);
		await expect(
			b.exec.run({ command: "true", cwd: ws().path("missing"), onData: () => {} }),
		).rejects.toMatchObject({
			code: "NOT_FOUND",
		});
	});
});

describe("exec backend: faults", () => {
	it("a transport that drops part of a write leaves the old file whole and no temp file", async () => {
		await writeFile(ws().path("f.txt"), "old content\n");
		const halfStdin: ExecTransport = (argv, o) =>
			dockerLike(argv, {
				...o,
				stdin: o.stdin instanceof Uint8Array ? o.stdin.subarray(0, o.stdin.length >> 1) : o.stdin,
			});
		const b = createExecBackend({ transport: halfStdin });
		const st = await b.fs.stat(ws().path("f.txt"));
		const data = Buffer.alloc(100_000, "n");
		await expect(
			b.fs.writeFile(ws().path("f.txt"), data, {
				expect: { stat: st, sha256: sha256(Buffer.from("old content\n")) },
			}),
		).rejects.toMatchObject({ code: "IO_ERROR" });
		await expect(b.fs.writeFile(ws().path("new.txt"), data, { expect: "absent" })).rejects.toMatchObject({
			code: "IO_ERROR",
		});
		expect(await readFile(ws().path("f.txt"), "utf8")).toBe("old content\n");
		expect(await readdir(ws().root)).toEqual(["f.txt"]);
	});

	it("an unreachable target is BACKEND_UNAVAILABLE, and the next call tries again", async () => {
		let up = false;
		const flaky: ExecTransport = (argv, o) =>
			up ? dockerLike(argv, o) : Promise.reject(new Error("connect ECONNREFUSED"));
		const b = createExecBackend({ transport: flaky });
		await writeFile(ws().path("f.txt"), "hello\n");
		// Session.create canonicalizes the root through the backend: the failure surfaces there.
		await expect(ws().open({ backend: b })).rejects.toMatchObject({
			code: "BACKEND_UNAVAILABLE",
		});
		up = true;
		const s = await ws().open({ backend: b });
		try {
			up = false;
			const r = await s.call("bash", { command: "true" });
			expect(r.ok ? "ok" : r.error.code).toBe("BACKEND_UNAVAILABLE");
			up = true;
			const read = await s.call("read", { path: "f.txt" });
			expect(read.ok).toBe(true);
		} finally {
			await s.close();
		}
	});

	it("a target without GNU coreutils is refused with the fix", async () => {
		const busybox: ExecTransport = (argv, o) =>
			argv[2]?.includes("%.9Y' /") ? Promise.resolve({ exitCode: 1 }) : dockerLike(argv, o);
		const b = createExecBackend({ transport: busybox });
		await expect(b.fs.stat(ws().root)).rejects.toMatchObject({ code: "BACKEND_UNAVAILABLE" });
		await expect(b.fs.stat(ws().root)).rejects.toThrow(/GNU coreutils/);
	});

	it("odd names: newlines, quotes, leading dashes and non-UTF-8-safe text survive readdir and realpath", async () => {
		const names = ["new\nline.txt", 'it\'s "quoted"', "-rf", " lead", "tab\tname", "ünï"];
		await Promise.all(names.map((n) => writeFile(ws().path(n), n)));
		const b = createExecBackend({ transport: dockerLike });
		const listed = (await b.fs.readdir(ws().root)).map((e) => e.name).sort();
		expect(listed).toEqual([...names].sort());
		for (const n of names) {
			expect(await b.fs.realpath(ws().path(n))).toBe(ws().path(n));
			expect((await b.fs.readFile(ws().path(n))).toString()).toBe(n);
		}
		await expect(b.fs.realpath(ws().path("missing"))).rejects.toMatchObject({ code: "ENOENT" });
		await expect(b.fs.readlink(ws().path("-rf"))).rejects.toMatchObject({ code: "EINVAL" });
	});
});

describe("exec backend: search without rg/fd", () => {
	/** The target, minus rg, fd and fdfind. */
	const noTools: ExecTransport = (argv, o) =>
		argv[2] === 'command -v "$1"' ? Promise.resolve({ exitCode: 1 }) : dockerLike(argv, o);

	async function tree(): Promise<void> {
		const files: Record<string, string> = {
			".git/HEAD": "needle git\n",
			".git/info/exclude": "excluded.txt\n",
			".gitignore": "*.log\nbuild/\n!keep.log\n/anchored.txt\n",
			".ignore": "secret-*\n",
			".rgignore": "rg-only.txt\n",
			"excluded.txt": "needle excluded\n",
			"a.log": "needle log\n",
			"keep.log": "needle keep\n",
			"anchored.txt": "needle anchored\n",
			"sub/anchored.txt": "needle sub anchored\n",
			"build/out.txt": "needle build\n",
			"secret-x.txt": "needle secret\n",
			"rg-only.txt": "needle rg-only\n",
			"src/.gitignore": "gen/\n",
			"src/gen/g.ts": "needle gen\n",
			"src/main.ts": "// needle main\nconst x = 1;\nneedle again\n",
			"src/Ünï.ts": "NEEDLE upper\n",
			"deep/a/b/c.txt": "x\nneedle deep\ny\n",
			"crlf.txt": "needle crlf\r\nnext\r\n",
			"bin.dat": "needle\0binary\n",
		};
		for (const [rel, text] of Object.entries(files)) {
			await mkdir(join(ws().root, rel, ".."), { recursive: true });
			await writeFile(ws().path(rel), text);
		}
	}

	const requests = (): Omit<GrepRequest, "path">[] => [
		{ pattern: "needle", context: 0, limit: 100 },
		{ pattern: "needle", context: 1, limit: 100, ignoreCase: true },
		{ pattern: "needle", context: 0, limit: 2 },
		{ pattern: "NEEDLE", context: 0, limit: 100, glob: "*.ts", ignoreCase: false },
		{ pattern: "n.edle", context: 0, limit: 100, literal: true },
		{ pattern: "needle", context: 0, limit: 100, glob: "!src/**" },
	];

	it("grep and find fall back and match the local JS engine on the same tree", async () => {
		await tree();
		const fallback = createExecBackend({ transport: noTools });
		const native = createExecBackend({ transport: dockerLike });
		const js = createJsSearch();
		for (const req of requests()) {
			const full = { ...req, path: ws().root };
			const want = await js.grep(full);
			const got = await fallback.search.grep(full);
			expect(got.engine).toBe("exec-fallback");
			expect({ ...got, engine: "" }, JSON.stringify(req)).toEqual({ ...want, engine: "" });
			// rg over the transport too (a negated glob is left out: rg and the JS engine disagree on it).
			if (req.glob?.startsWith("!")) continue;
			const rg = await native.search.grep(full);
			expect(rg.engine).toBe("rg");
			expect({ ...rg, engine: "" }, JSON.stringify(req)).toEqual({ ...want, engine: "" });
		}
		for (const pattern of ["*", "*.txt", "src/**", "/sub/*", "*.ts", ""]) {
			const req = { pattern, path: ws().root, limit: 100 };
			const want = await js.find(req);
			expect({ ...(await fallback.search.find(req)), engine: "" }, pattern).toEqual({ ...want, engine: "" });
		}
		expect((await fallback.search.find({ pattern: "*", path: ws().root, limit: 3 })).limitReached).toBe(true);
		await expect(
			fallback.search.find({ pattern: "*", path: ws().path("crlf.txt"), limit: 3 }),
		).rejects.toMatchObject({
			code: "NOT_DIRECTORY",
		});
		await expect(
			fallback.search.grep({ pattern: "x", path: ws().path("nope"), context: 0, limit: 3 }),
		).rejects.toMatchObject({
			code: "NOT_FOUND",
		});
		const named = await fallback.search.grep({
			pattern: "needle",
			path: ws().path("a.log"),
			context: 0,
			limit: 3,
		});
		expect(named.matches.map((m) => m.text)).toEqual(["needle log"]);
	});
});
