/** Contract: streaming, abort, timeout and bounded output on every backend. */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
import type { ToolResult } from "../../src/tools/types.js";
import { expectCode, expectOk, forEachBackend, processesWith, waitFor } from "./harness.js";

/** A command whose processes (a forked background child and a foreground one) carry `marker`. */
function sleepers(marker: string): string {
	return `sh -c 'sleep 299; :' ${marker} & sh -c 'echo started; sleep 299; :' ${marker}`;
}

function partialText(p: ToolResult): string {
	return p.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

forEachBackend((x) => {
	it("streams output before the command ends", async () => {
		const s = await x().open();
		let firstAt: number | undefined;
		const started = Date.now();
		const r = await s.call(
			"bash",
			{ command: "echo first; sleep 1.5; echo second" },
			{
				onUpdate: (p) => {
					if (firstAt === undefined && partialText(p).includes("first")) firstAt = Date.now();
				},
			},
		);
		const endedAt = Date.now();
		expect(expectOk(r)).toBe("first\nsecond");
		expect(firstAt, "no update with partial output").toBeDefined();
		expect(endedAt - firstAt!).toBeGreaterThan(800);
		expect(firstAt! - started).toBeLessThan(endedAt - started);
	});

	it("abort ends the call promptly and kills the whole process tree", async () => {
		const s = await x().open();
		const marker = `keel-abort-${randomBytes(6).toString("hex")}`;
		const ac = new AbortController();
		const t0 = Date.now();
		const r = await s.call(
			"bash",
			{ command: sleepers(marker) },
			{
				signal: ac.signal,
				onUpdate: (p) => {
					if (partialText(p).includes("started")) ac.abort();
				},
			},
		);
		expectCode(r, "ABORTED");
		expect(Date.now() - t0).toBeLessThan(10_000);
		expect(
			await waitFor(() => processesWith(marker).length === 0, 5000),
			processesWith(marker).join("\n"),
		).toBe(true);
	});

	it("timeout kills the command and reports TIMEOUT", async () => {
		const s = await x().open();
		const marker = `keel-timeout-${randomBytes(6).toString("hex")}`;
		const t0 = Date.now();
		const r = await s.call("bash", { command: sleepers(marker), timeout: 1 });
		expectCode(r, "TIMEOUT");
		expect(Date.now() - t0).toBeLessThan(8000);
		expect(
			await waitFor(() => processesWith(marker).length === 0, 5000),
			processesWith(marker).join("\n"),
		).toBe(true);
	});

	it("bounds a huge output, keeps the tail and spills the whole of it to a readable file", async () => {
		const s = await x().open();
		const r = await s.call("bash", { command: "seq 1 200000" });
		const out = expectOk(r);
		expect(out).toContain("200000");
		expect(out).toContain("[Showing lines");
		const spill = /Full output: (\S+)\]/.exec(out)?.[1];
		expect(spill).toBeDefined();
		const full = await readFile(spill!, "utf8");
		expect(full.split("\n").length).toBe(200_001);
		expect(expectOk(await s.call("read", { path: spill!, offset: 1, limit: 3 }))).toContain("1\n2\n3");
	});

	it("a command that ends leaves no background job behind, and a pending abort does not matter", async () => {
		const s = await x().open();
		const r = await s.call("bash", { command: "printf 'a\\0b' | od -c | head -1; exit 0" });
		expect(expectOk(r)).toContain("a  \\0   b");
		const ac = new AbortController();
		ac.abort();
		expectCode(await s.call("bash", { command: "true" }, { signal: ac.signal }), "ABORTED");
	});
});
