/**
 * streamCall (src/adapters/updates.ts) with a real session and a real command: a consumer slower
 * than the output still gets partials that only grow, then the final result last.
 */
import { expect, it } from "vitest";
import { bindTools } from "../../src/adapters/binding.js";
import { streamCall } from "../../src/adapters/updates.js";
import { useWorkspace } from "../fixtures/workspace.js";

const ws = useWorkspace({ prefix: "keel-stream-" });

it("a slow consumer: partials only grow, and the whole output comes last", async () => {
	const [bash] = bindTools(ws().session, { only: ["bash"] });
	const command = "for i in $(seq 40); do echo line-$i; sleep 0.02; done";
	const seen: string[] = [];
	for await (const r of streamCall(bash, { command })) {
		seen.push(r.text);
		// Slower than the command's output: updates pile up while this waits.
		await new Promise((resolve) => setTimeout(resolve, 60));
	}
	expect(seen.length).toBeGreaterThanOrEqual(2);
	const final = seen.at(-1)!;
	expect(final.trimEnd().endsWith("line-40")).toBe(true);
	// Each partial is the whole output so far: a prefix of everything after it.
	for (let i = 1; i < seen.length; i++) expect(seen[i].startsWith(seen[i - 1].trimEnd())).toBe(true);
});

it("a failing call ends the stream with its error result", async () => {
	const [bash] = bindTools(ws().session, { only: ["bash"] });
	const results = [];
	for await (const r of streamCall(bash, { command: "echo partial; sleep 0.3; exit 4" })) results.push(r);
	const last = results.at(-1)!;
	expect(last.isError).toBe(true);
	expect(last.error?.code).toBe("COMMAND_FAILED");
	expect(results.slice(0, -1).every((r) => !r.isError)).toBe(true);
});

it("an abort ends the stream with ABORTED", async () => {
	const [bash] = bindTools(ws().session, { only: ["bash"] });
	const controller = new AbortController();
	const results = [];
	for await (const r of streamCall(
		bash,
		{ command: "echo started; sleep 30" },
		{ signal: controller.signal },
	)) {
		results.push(r);
		if (r.text.includes("started")) controller.abort();
	}
	expect(results.at(-1)!.error?.code).toBe("ABORTED");
});
