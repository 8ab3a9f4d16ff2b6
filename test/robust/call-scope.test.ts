/**
 * "No child of a call outlives it", made structural: every call runs in a
 * CallScope. Work a backend leaves unawaited is owned by the call (its failure never escapes as an
 * unhandled rejection, the call waits for it), the call's signal is aborted once it has its answer,
 * a closing session aborts the calls still running, and a host callback that throws cannot break
 * the call. vitest fails the run on any unhandled rejection, so an escape fails these tests.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Backend, GrepRequest, SearchOps } from "../../src/backend/types.js";
import { KeelError } from "../../src/boundary/errors.js";
import { runKeel } from "../fixtures/keel-cli.js";
import { useWorkspace } from "../fixtures/workspace.js";

// Each test opens its sessions itself, on a backend it builds.
const ws = useWorkspace({ prefix: "keel-scope-", files: { "a.txt": "alpha\nbeta\n" }, session: false });

function withSearch(grep: SearchOps["grep"]): Backend {
	const local = createLocalBackend({ searchEngine: "js" });
	return { ...local, search: { ...local.search, grep } };
}

describe("keel batch survives a call whose background work fails (JS engine, rg off PATH)", () => {
	it("a 100,000-character grep pattern, then every further call still answers", async () => {
		// Enough files that the JS engine has reads in flight when the first one fails.
		await mkdir(ws().path("many"));
		for (let i = 0; i < 40; i++) await writeFile(ws().path(`many/f${i}.txt`), `line ${i}\n`.repeat(50));
		const empty = ws().path("empty-path");
		await mkdir(empty);
		const calls = [
			{ tool: "grep", args: { pattern: "a".repeat(100_000) } },
			{ tool: "grep", args: { pattern: `(${"a|".repeat(50_000)}b)` } },
			{ tool: "ls", args: {} },
			{ tool: "read", args: { path: "a.txt" } },
			{ tool: "grep", args: { pattern: "beta" } },
			{ tool: "find", args: { pattern: "*.txt", path: "many", limit: 3 } },
			{ tool: "bash", args: { command: "echo still-here" } },
		];
		const run = await runKeel(ws().root, ["batch"], {
			input: `${calls.map((c) => JSON.stringify(c)).join("\n")}\n`,
			env: { ...process.env, PATH: empty },
		});
		const answers = run.stdout
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l));
		expect(run.stderr).not.toMatch(/Uncaught|SyntaxError|at .*\.js:\d+/);
		expect(answers).toHaveLength(calls.length);
		expect(answers[0].ok).toBe(false);
		expect(answers[0].error.code).not.toBe("IO_ERROR");
		expect(answers[0].error.message).not.toMatch(/Invalid regular expression|\/a{20}/);
		expect(answers[2].ok).toBe(true);
		expect(answers[3]).toMatchObject({ ok: true, content: expect.stringContaining("beta") });
		expect(answers[4]).toMatchObject({ ok: true, content: expect.stringContaining("a.txt:2: beta") });
		expect(answers[5].ok).toBe(true);
		expect(answers[6]).toMatchObject({ ok: true, content: "still-here" });
		expect(run.code).toBe(1); // some calls failed; the process itself did not die
	}, 60_000);
});

describe("Session.call owns each call's work", () => {
	it("work a backend leaves unawaited is awaited before the answer, and its failure absorbed", async () => {
		let leftoverSettled = false;
		const backend = withSearch(async (req: GrepRequest) => {
			// Read-ahead the engine abandons: it fails after the engine has answered.
			const leftover = new Promise<never>((_, reject) =>
				setTimeout(() => {
					leftoverSettled = true;
					reject(new Error("late failure in abandoned work"));
				}, 150),
			);
			req.owner?.own(leftover);
			return { matches: [], limitReached: false, engine: "test" };
		});
		const session = await ws().open({ backend });
		const r = await session.call("grep", { pattern: "x" });
		expect(r).toMatchObject({ ok: true });
		expect(leftoverSettled).toBe(true);
		// The session goes on answering.
		expect((await session.call("read", { path: "a.txt" })).ok).toBe(true);
	});

	it("the call's signal is aborted once the call has its answer, success or failure", async () => {
		const seen: AbortSignal[] = [];
		let fail = false;
		const backend = withSearch(async (req) => {
			seen.push(req.signal!);
			expect(req.signal!.aborted).toBe(false);
			if (fail) throw new KeelError("NO_MATCH", "nothing");
			return { matches: [], limitReached: false, engine: "test" };
		});
		const session = await ws().open({ backend });
		await session.call("grep", { pattern: "x" });
		fail = true;
		await session.call("grep", { pattern: "x" });
		expect(seen).toHaveLength(2);
		expect(seen.map((s) => s.aborted)).toEqual([true, true]);
	});

	it("a caller's abort reaches the backend through the call's signal", async () => {
		const backend = withSearch(
			(req) =>
				new Promise((_, reject) =>
					req.signal!.addEventListener("abort", () => reject(new KeelError("ABORTED", "stopped")), {
						once: true,
					}),
				),
		);
		const session = await ws().open({ backend });
		const controller = new AbortController();
		const pending = session.call("grep", { pattern: "x" }, { signal: controller.signal });
		setTimeout(() => controller.abort(), 50);
		expect(await pending).toMatchObject({ ok: false, error: { code: "ABORTED" } });
	});

	it("closing the session aborts its running calls, and they answer", async () => {
		const backend = withSearch(
			(req) =>
				new Promise((_, reject) =>
					req.signal!.addEventListener("abort", () => reject(new KeelError("ABORTED", "stopped")), {
						once: true,
					}),
				),
		);
		const session = await ws().open({ backend });
		const pending = session.call("grep", { pattern: "x" });
		await new Promise((r) => setTimeout(r, 50));
		await session.close();
		expect(await pending).toMatchObject({ ok: false, error: { code: "ABORTED" } });
		expect(await session.call("ls", {})).toMatchObject({ ok: false, error: { code: "BACKEND_UNAVAILABLE" } });
	});

	it("a host progress callback that throws does not break the call", async () => {
		const session = await ws().open();
		let updates = 0;
		const r = await session.call(
			"bash",
			{ command: "for i in 1 2 3; do echo $i; sleep 0.15; done" },
			{
				onUpdate: () => {
					updates++;
					throw new Error("the host's renderer failed");
				},
			},
		);
		expect(r).toMatchObject({ ok: true, content: [{ type: "text", text: "1\n2\n3" }] });
		expect(updates).toBeGreaterThan(0);
	});
});
