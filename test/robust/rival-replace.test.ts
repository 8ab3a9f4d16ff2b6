/**
 * Another writer that atomically replaces a file (temp file + rename, as keel, editors and git do)
 * at the worst moments, with the real local backend and real renames.
 *
 * Between the stat and the open of an edit's read: the file there after the rename is a complete
 * newer version, so the read takes it (its identity from the open handle) and the edit lands on it;
 * losing that race is no conflict, however often it happens (a busy rival under load used to make
 * the read give up after 4 tries with CHANGED_ON_DISK; test/robust/shared-workspace.test.ts).
 *
 * Before every compare-and-swap: the edit can never commit. That is legitimate starvation: it must
 * end in CHANGED_ON_DISK with retry advice after the documented 8 re-plans, leave the rival's
 * bytes and no temp file, and land when retried once the rival stops.
 */
import { readdir, readFile, rename, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Backend, FileOps } from "../../src/backend/types.js";
import type { CallResult, Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

// Each test opens its session itself, on a backend with the rival's trap.
const ws = useWorkspace({ prefix: "keel-rival-", files: { "f.txt": "ours v0\ntheirs 0\n" }, session: false });
/** The file both writers change. */
const fTxt = () => ws().path("f.txt");

/** The rival: its own line bumped, written to a temp file and renamed over the target. */
function rival(): { replace: () => Promise<void>; count: () => number } {
	let n = 0;
	return {
		replace: async () => {
			const text = await readFile(fTxt(), "utf8");
			n++;
			await writeFile(ws().path(".rival.tmp"), text.replace(/^theirs \d+$/m, `theirs ${n}`));
			await rename(ws().path(".rival.tmp"), fTxt());
		},
		count: () => n,
	};
}

/** A local backend whose every `stat` of the target is followed by the rival's replace (while `on()`). */
function replaceAfterStat(replace: () => Promise<void>, on: () => boolean): Backend {
	const base = createLocalBackend();
	const fs: FileOps = {
		...base.fs,
		stat: async (p) => {
			const st = await base.fs.stat(p);
			if (p === fTxt() && on()) await replace();
			return st;
		},
	};
	return { ...base, fs };
}

const change = { oldText: "ours v0", newText: "ours v1" };
const calls = {
	edit: (s: Session) => s.call("edit", { path: "f.txt", edits: [change] }),
	file: (s: Session) => s.call("file", { queries: [{ type: "edit", path: "f.txt", edits: [change] }] }),
};
const profileOf = { edit: "pi", file: "unified" } as const;

const EXHAUSTED =
	"f.txt kept changing under other writers; the edit was planned again 8 times and never committed. Read it again and retry.";

function okText(r: CallResult): string {
	expect(r.ok, JSON.stringify(r)).toBe(true);
	return r.ok ? JSON.stringify(r.content) : "";
}

describe.each(["edit", "file"] as const)("%s against a rival that replaces the file", (tool) => {
	it("between every stat and open of its read: the read takes the newer file and the edit lands", async () => {
		const r0 = rival();
		// Far more lost races than the read used to allow (4); the rival stops only when the test ends.
		const backend = replaceAfterStat(r0.replace, () => true);
		const s = await ws().open({ backend, profile: profileOf[tool] });
		const r = await calls[tool](s);
		okText(r);
		expect(r0.count()).toBeGreaterThan(0); // the trap fired: the stat'ed file was replaced
		// Our change on the rival's newest version: both writers' changes are there.
		expect(await readFile(fTxt(), "utf8")).toBe(`ours v1\ntheirs ${r0.count()}\n`);
	});

	it("before every compare-and-swap: CHANGED_ON_DISK with retry advice, nothing lost, lands once it stops", async () => {
		const r0 = rival();
		let racing = true;
		const backend = createLocalBackend({
			hooks: {
				beforeCommit: async (target) => {
					if (racing && target === fTxt()) await r0.replace();
				},
			},
		});
		const s = await ws().open({ backend, profile: profileOf[tool] });
		const r = await calls[tool](s);
		expect(r.ok).toBe(false);
		if (!r.ok) {
			expect(r.error.code).toBe("CHANGED_ON_DISK");
			expect(r.error.retry).toBe("retry");
			// Edit's own message (edit/replan.ts replansExhausted): what happened, how often, what next.
			expect(r.error.message).toBe(EXHAUSTED);
		}
		// The first try and 8 re-plans (docs/SAFETY.md), each lost to a replace.
		expect(r0.count()).toBe(9);
		// The rival's last version, whole; nothing of ours half-applied; no temp file left.
		expect(await readFile(fTxt(), "utf8")).toBe("ours v0\ntheirs 9\n");
		expect((await readdir(ws().root)).sort()).toEqual(["f.txt"]);
		racing = false;
		okText(await calls[tool](s));
		expect(await readFile(fTxt(), "utf8")).toBe("ours v1\ntheirs 9\n");
	});
});

describe("file with two queries against a rival on one of them", () => {
	it("before every compare-and-swap: the whole call fails with edit's message, both files as they were", async () => {
		const other = ws().path("g.txt");
		await writeFile(other, "ours v0\n");
		const r0 = rival();
		const backend = createLocalBackend({
			hooks: {
				beforeCommit: async (target) => {
					if (target === fTxt()) await r0.replace();
				},
			},
		});
		const s = await ws().open({ backend, profile: "unified" });
		const r = await s.call("file", {
			queries: [
				{ type: "edit", path: "g.txt", edits: [change] },
				{ type: "edit", path: "f.txt", edits: [change] },
			],
		});
		expect(r.ok).toBe(false);
		if (!r.ok) {
			expect(r.error.code).toBe("CHANGED_ON_DISK");
			// g.txt is committed first on each try (query order), then restored when f.txt loses.
			expect(r.error.message).toBe(
				`queries[1] (edit f.txt): ${EXHAUSTED} Nothing was changed: 1 file(s) this call had already written were restored (g.txt).`,
			);
		}
		expect(r0.count()).toBe(9);
		// The rival's last version whole, and g.txt (committed or not on each try) back as it was.
		expect(await readFile(fTxt(), "utf8")).toBe("ours v0\ntheirs 9\n");
		expect(await readFile(other, "utf8")).toBe("ours v0\n");
		expect((await readdir(ws().root)).sort()).toEqual(["f.txt", "g.txt"]);
	});
});
