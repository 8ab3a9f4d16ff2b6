/**
 * Many agents on one workspace. 24 library sessions share one QueueRegistry (as the
 * MCP server's sessions do) and a separate `keel batch` process edits the same file at the same
 * time; every agent rewrites its own line. Same-process commits wait in the shared queue; the
 * other process's commits race them, and the losing compare-and-swaps re-plan on the new bytes.
 * Every non-conflicting edit must land and nothing may be lost; edits whose anchor another writer
 * removed fail as conflicts, saying so.
 *
 * The library's rounds start once the other process has committed its first edit: under load its
 * start-up used to outlast all 72 library edits, so the two never raced. A read that meets the
 * other's rename between its stat and its open takes the newer file (edit/snapshot.ts readRegular);
 * that race, lost on every try, and an edit starved at every compare-and-swap are pinned
 * deterministically in rival-replace.test.ts. Here the other writer is finite (48 edits), well
 * within the 8 re-plans with back-off, so every edit must land.
 */
import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { QueueRegistry } from "../../src/safety/mutation-queue.js";
import type { CallResult, Session } from "../../src/session.js";
import { runKeel } from "../fixtures/keel-cli.js";
import { makeWorkspace, useWorkspace } from "../fixtures/workspace.js";

// Each test opens its sessions itself, on the queue registry it checks.
const ws = useWorkspace({ prefix: "keel-shared-", session: false });

/** The file's text once `text` appears in it (the other process's first commit), or when `other` ends. */
async function firstEditOf(other: Promise<unknown>, path: string, text: string): Promise<string> {
	let ended = false;
	const end = () => {
		ended = true;
	};
	other.then(end, end);
	for (;;) {
		const now = await readFile(path, "utf8");
		if (now.includes(text) || ended) return now;
		await new Promise((r) => setTimeout(r, 2));
	}
}

const SESSIONS = 24;
const ROUNDS = 3;
const CLI_LINES = 16;

describe("many sessions and another process editing one file", () => {
	it("every non-conflicting edit lands, nothing is lost", async () => {
		const lib = Array.from({ length: SESSIONS }, (_, i) => `lib ${i} v0`);
		const cli = Array.from({ length: CLI_LINES }, (_, i) => `cli ${i} v0`);
		await writeFile(ws().path("shared.txt"), `${[...lib, ...cli].join("\n")}\n`);
		const queues = new QueueRegistry();
		const sessions = await Promise.all(
			Array.from({ length: SESSIONS }, (_, i) => ws().open({ queues, profile: i % 2 ? "unified" : "pi" })),
		);
		expect(queues.size).toBe(1);
		expect(new Set(sessions.map((s) => s.queue)).size).toBe(1);

		// The other process: one batch of anchored edits, each on its own line.
		const batch = Array.from({ length: ROUNDS }, (_, round) =>
			cli.map((_, i) =>
				JSON.stringify({
					tool: "edit",
					args: {
						path: "shared.txt",
						edits: [{ oldText: `cli ${i} v${round}`, newText: `cli ${i} v${round + 1}` }],
					},
				}),
			),
		).flat();
		const other = runKeel(ws().root, ["batch"], { input: `${batch.join("\n")}\n` });
		const atStart = await firstEditOf(other, ws().path("shared.txt"), "cli 0 v1");
		// The other process is mid-batch as the rounds begin (its last edit is still to come).
		expect(atStart).toContain("cli 0 v1");
		expect(atStart).not.toContain(`cli ${CLI_LINES - 1} v${ROUNDS}`);

		const edit = (s: Session, i: number, round: number): Promise<CallResult> => {
			const change = { oldText: `lib ${i} v${round}`, newText: `lib ${i} v${round + 1}` };
			return i % 2
				? s.call("file", { queries: [{ type: "edit", path: "shared.txt", edits: [change] }] })
				: s.call("edit", { path: "shared.txt", edits: [change] });
		};
		const results: CallResult[] = [];
		for (let round = 0; round < ROUNDS; round++) {
			results.push(...(await Promise.all(sessions.map((s, i) => edit(s, i, round)))));
		}
		const run = await other;
		const cliResults = run.stdout
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l));
		for (const s of sessions) await s.close();
		expect(queues.size).toBe(0);

		const failed = results.filter((r) => !r.ok);
		expect(failed, JSON.stringify(failed.slice(0, 3))).toEqual([]);
		expect(cliResults.filter((r) => !r.ok)).toEqual([]);
		expect(cliResults).toHaveLength(batch.length);
		const final = (await readFile(ws().path("shared.txt"), "utf8")).split("\n");
		expect(final).toEqual([
			...lib.map((_, i) => `lib ${i} v${ROUNDS}`),
			...cli.map((_, i) => `cli ${i} v${ROUNDS}`),
			"",
		]);
	}, 120_000);

	it("an edit whose anchor another writer changed fails as a conflict, and the other's bytes stay", async () => {
		await writeFile(ws().path("f.txt"), "one\ntwo\nthree\n");
		const queues = new QueueRegistry();
		const a = await ws().open({
			queues,
			profile: "unified",
			// Another process rewrites the very line this edit is anchored on, after preflight.
			probes: { afterAdmission: () => writeFile(ws().path("f.txt"), "one\nTWO (theirs)\nthree\n") },
		});
		const r = await a.call("file", {
			queries: [{ type: "edit", path: "f.txt", edits: [{ oldText: "two", newText: "2" }] }],
		});
		expect(r.ok).toBe(false);
		if (!r.ok) {
			expect(r.error.code).toBe("NO_MATCH");
			expect(r.error.message).toMatch(/changed by another writer.*conflicts/);
		}
		expect(await readFile(ws().path("f.txt"), "utf8")).toBe("one\nTWO (theirs)\nthree\n");
	});

	it("sessions on different workspaces get different queues", async () => {
		const other = await makeWorkspace({ prefix: "keel-shared-other-", session: false });
		try {
			const queues = new QueueRegistry();
			const a = await ws().open({ queues });
			const b = await other.open({ queues });
			const c = await ws().open();
			expect(a.queue).not.toBe(b.queue);
			expect(a.queue).not.toBe(c.queue); // no registry: a queue of its own
			expect(queues.size).toBe(2);
			await Promise.all([a.close(), b.close(), c.close()]);
			expect(queues.size).toBe(0);
		} finally {
			await other.close();
		}
	});
});
