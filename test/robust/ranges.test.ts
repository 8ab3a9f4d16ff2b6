import { describe, expect, it, vi } from "vitest";
import { type JsonSchema, rangeOf } from "../../src/boundary/schema.js";
import { MAX_TIMER_MS, setLongTimeout } from "../../src/boundary/timing.js";
import type { CallResult } from "../../src/session.js";
import { MAX_TIMEOUT_SECONDS } from "../../src/tools/ranges.js";
import { PROFILES, toolsForProfile } from "../../src/tools/registry.js";
import { useWorkspace } from "../fixtures/workspace.js";
import { NO_PYTHON, PYTHON } from "../python/helpers.js";

// Each test opens its sessions itself, with the profile it checks.
const ws = useWorkspace({ prefix: "keel-ranges-", files: { "a.txt": "alpha\nbeta\n" }, session: false });

/** Every numeric field of a schema, by its path ("edits[].startLine"), with the schema node. */
function numericFields(schema: JsonSchema, at = ""): Array<[string, JsonSchema]> {
	if (schema.type === "number" || schema.type === "integer") return [[at, schema]];
	if (schema.type === "array" && schema.items) return numericFields(schema.items, `${at}[]`);
	if (schema.type === "object") {
		return Object.entries(schema.properties ?? {}).flatMap(([k, v]) =>
			numericFields(v, at ? `${at}.${k}` : k),
		);
	}
	return [];
}

/** A valid call per tool, and how to put a number into each numeric field of it. */
const BASE: Record<string, Record<string, unknown>> = {
	read: { path: "a.txt" },
	bash: { command: "true" },
	grep: { pattern: "alpha" },
	find: { pattern: "*.txt" },
	ls: {},
	python: { code: "1" },
	python_jobs: { action: "wait", jobId: "job-none" },
	shell: { command: ["true"] },
	read_file: { file_path: "a.txt" },
	list_dir: { dir_path: "." },
	process: { action: "read", id: 1 },
	exec_command: { cmd: "true" },
	write_stdin: { session_id: 1 },
};

function withNumber(tool: string, field: string, value: number): Record<string, unknown> {
	if (tool === "file") {
		const name = field.split(".").pop()!;
		const edit = { matchMode: "lineRange", startLine: 1, endLine: 1, newText: "x", [name]: value };
		return { queries: [{ type: "edit", path: "a.txt", edits: [edit] }] };
	}
	return { ...BASE[tool], [field]: value };
}

describe("every numeric argument has a range", () => {
	const all = PROFILES.flatMap((p) => toolsForProfile(p).map((t) => [p, t] as const));

	it("every number and integer field of every tool, both profiles, states a lower and upper bound", () => {
		const missing: string[] = [];
		let fields = 0;
		for (const [profile, tool] of all) {
			for (const [field, schema] of numericFields(tool.parameters)) {
				fields++;
				const r = rangeOf(schema);
				const low = r.minimum ?? r.exclusiveMinimum;
				if (low === undefined || r.maximum === undefined) missing.push(`${profile}/${tool.name}.${field}`);
			}
		}
		expect(missing).toEqual([]);
		expect(fields).toBeGreaterThanOrEqual(12);
	});

	for (const profile of PROFILES) {
		it(`${profile}: values outside each range are INVALID_ARGS naming the range, and nothing runs`, async () => {
			const session = await ws().open({ profile });
			for (const tool of session.tools) {
				for (const [field, schema] of numericFields(tool.parameters)) {
					const r = rangeOf(schema);
					const low = r.exclusiveMinimum ?? r.minimum!;
					const tooLow = r.exclusiveMinimum !== undefined ? r.exclusiveMinimum : r.minimum! - 1;
					const bounds = [
						r.exclusiveMinimum !== undefined ? `greater than ${low}` : `at least ${low}`,
						`at most ${r.maximum}`,
					].join(" and ");
					// Every value here is outside the range (2^31 is inside a millisecond timeout's year).
					const outside = [tooLow, r.maximum! + 1, 2 ** 31, 2 ** 53, 1e308, -1e308].filter(
						(v) => v > r.maximum! || v <= tooLow,
					);
					for (const bad of outside) {
						const res = await session.call(tool.name, withNumber(tool.name, field, bad));
						const name = field.split(".").pop()!;
						expect(res.ok, `${tool.name}.${field} = ${bad}`).toBe(false);
						if (res.ok) continue;
						expect(res.error.code, `${tool.name}.${field} = ${bad}`).toBe("INVALID_ARGS");
						expect(res.error.message).toContain(name);
						expect(res.error.message).toContain(bounds);
					}
				}
			}
			// Nothing ran: no file was created or changed.
			const read =
				profile === "codex"
					? session.call("read_file", { file_path: "a.txt" })
					: session.call("read", { path: "a.txt" });
			expect((await read).ok).toBe(true);
		}, 60_000);
	}

	it("the bounds themselves are accepted", async () => {
		const session = await ws().open({ profile: "unified" });
		const ok = (r: CallResult) => expect(r.ok, JSON.stringify(r)).toBe(true);
		ok(await session.call("read", { path: "a.txt", offset: 1, limit: 1_000_000_000 }));
		ok(await session.call("grep", { pattern: "alpha", context: 1000, limit: 100_000 }));
		ok(await session.call("grep", { pattern: "alpha", context: 0, limit: 1 }));
		ok(await session.call("find", { pattern: "*.txt", limit: 100_000 }));
		ok(await session.call("ls", { limit: 100_000 }));
		ok(await session.call("bash", { command: "true", timeout: MAX_TIMEOUT_SECONDS }));
	});
});

describe("long timeouts mean long (Node timers overflow at 2^31 ms)", () => {
	it("setLongTimeout chains timers past 2^31-1 ms; a plain setTimeout would fire at once", () => {
		vi.useFakeTimers();
		try {
			let plain = false;
			let long = false;
			setTimeout(() => {
				plain = true;
			}, MAX_TIMER_MS + 1000);
			setLongTimeout(() => {
				long = true;
			}, MAX_TIMER_MS + 1000);
			vi.advanceTimersByTime(10);
			expect(plain).toBe(true); // what Node does with such a delay: the bug being fixed
			expect(long).toBe(false);
			vi.advanceTimersByTime(MAX_TIMER_MS - 10);
			expect(long).toBe(false);
			vi.advanceTimersByTime(999);
			expect(long).toBe(false);
			vi.advanceTimersByTime(1);
			expect(long).toBe(true);
		} finally {
			vi.useRealTimers();
		}
	});

	it("a cleared long timer never fires", () => {
		vi.useFakeTimers();
		try {
			let fired = false;
			const t = setLongTimeout(() => {
				fired = true;
			}, 3 * MAX_TIMER_MS);
			vi.advanceTimersByTime(MAX_TIMER_MS + 5);
			t.clear();
			vi.advanceTimersByTime(3 * MAX_TIMER_MS);
			expect(fired).toBe(false);
		} finally {
			vi.useRealTimers();
		}
	});

	it("bash with timeout 3000000 s (past 2^31 ms) runs the command to its end", async () => {
		const session = await ws().open();
		for (const timeout of [3_000_000, 2 ** 31 / 1000 + 1, MAX_TIMEOUT_SECONDS]) {
			const r = await session.call("bash", { command: "sleep 0.3; echo finished", timeout });
			expect(r, `timeout ${timeout}`).toMatchObject({ ok: true, content: [{ text: "finished" }] });
		}
	});

	it.skipIf(NO_PYTHON)(
		"python's timeout and python_jobs' wait past 2^31 ms wait for the job",
		async () => {
			const session = await ws().open({
				profile: "unified",
				python: { interpreter: PYTHON, backgroundAfterMs: 200 },
			});
			const direct = await session.call("python", {
				code: "import time; time.sleep(0.3); 'done'",
				timeout: 3e6,
			});
			// Past the 200 ms threshold the job moves to the background instead of timing out at once.
			expect(direct.ok, JSON.stringify(direct)).toBe(true);
			const details = (direct as { details?: { jobId?: string; exitState?: string } }).details;
			const jobId = details?.jobId;
			expect(jobId).toBeTruthy();
			const waited = await session.call("python_jobs", { action: "wait", jobId, timeout: 3e6 });
			expect(waited.ok, JSON.stringify(waited)).toBe(true);
			expect(JSON.stringify(waited)).toContain("done");
			expect((waited as { details?: { exitState?: string } }).details?.exitState).toBe("ok");
			await session.close();
		},
		30_000,
	);
});
