/**
 * `read` and the python tool's script read against another writer that atomically replaces the
 * file (temp file + rename) right after every stat the tool makes, on the real local backend.
 *
 * The file there after the rename is a complete newer version: the read takes it as opened (stat
 * from the open handle), whole and of one version, and records that version's identity, so a
 * following lineRange edit of the new lines lands and one of the old lines is refused. Small files
 * (read whole, bounded) and large ones (the streamed window) alike, and a replace that moves the
 * file across the size that picks between the two. What is not a newer regular file is still
 * refused: a parent directory swapped for a link, a link or a FIFO renamed over the file.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Backend } from "../../src/backend/types.js";
import { Session } from "../../src/session.js";
import {
	afterStatOf,
	contentOf,
	expectOnlyTheNewestEdited,
	lineRange,
	rival,
	versionText,
} from "../fixtures/rival.js";
import { NO_PYTHON, pySessions, textOf } from "../python/helpers.js";

const SECRET = "SECRETBYTES";
let scratch: string;
let dir: string;
let path: string;
beforeEach(async () => {
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-read-rival-")));
	dir = join(scratch, "root", "a");
	path = join(dir, "f.txt");
	await mkdir(dir, { recursive: true });
	await mkdir(join(scratch, "elsewhere"));
	await writeFile(join(scratch, "elsewhere", "f.txt"), `${SECRET}\n`);
});
afterEach(async () => {
	await rm(scratch, { recursive: true, force: true });
});

/** Version `n` of a file of `lines` lines, each naming its version and number. */
const small = (n: number) => versionText(n, 40, 10);
/** ~400 KB: over the 256 KiB read streams through the window. */
const large = (n: number) => versionText(n, 4000, 80);

/** A local backend that runs `act` after every stat of `path` while `on`, and counts streamed reads. */
function afterStat(act: () => Promise<void>): { backend: Backend; off: () => void; windows: () => number } {
	let windows = 0;
	const base = createLocalBackend();
	const readWindow = base.fs.readWindow;
	const counted: Backend = {
		...base,
		fs: {
			...base.fs,
			readWindow:
				readWindow &&
				((p, e, w) => {
					windows++;
					return readWindow(p, e, w);
				}),
		},
	};
	return { ...afterStatOf(counted, path, act), windows: () => windows };
}

const cases = {
	small: (n: number) => small(n),
	large: (n: number) => large(n),
	"small, then large": (n: number) => (n === 0 ? small(n) : large(n)),
	"large, then small": (n: number) => (n === 0 ? large(n) : small(n)),
};

describe.each(Object.entries(cases))(
	"read against a rival replacing the %s file after every stat",
	(_, version) => {
		it("reads the newer file whole as opened, and records it: an edit of its lines lands, of the old is refused", async () => {
			await writeFile(path, version(0));
			const r0 = rival(path, version);
			const { backend, off, windows } = afterStat(r0.replace);
			const s = await Session.create({ root: dir, backend, profile: "unified" });
			try {
				const part = contentOf(await s.call("read", { path: "f.txt", offset: 7, limit: 3 }));
				const n = r0.count();
				expect(n).toBeGreaterThan(0); // the trap fired
				// The size as opened bounds the whole read: a file that grew past it is streamed.
				if (version(n).length > 256 * 1024) expect(windows()).toBe(1);
				const lines = version(n).split("\n").slice(0, -1);
				// One version throughout: the lines shown and the line count are the newest file's.
				expect(part).toBe(
					`${lines.slice(6, 9).join("\n")}\n\n[${lines.length - 9} more lines in file. Use offset=10 to continue.]`,
				);
				if (lines.length <= 2000) {
					const whole = contentOf(await s.call("read", { path: "f.txt" }));
					expect(whole).toBe(version(r0.count()).slice(0, -1));
				}
				off();
				await expectOnlyTheNewestEdited(s, path, version, r0.count());
				// A replace after the read (no stat in between) still makes that read stale.
				await r0.replace();
				const late = await lineRange(s, version(r0.count()).split("\n")[6], "ours");
				expect(late.ok ? "" : late.error.code).toBe("STALE_READ");
				expect(await readFile(path, "utf8")).toBe(version(r0.count()));
			} finally {
				await s.close();
			}
		});
	},
);

/** What is put at the path after the stat: none of it is a newer regular file. */
const plants = {
	"parent directory swapped for a link": async () => {
		await rename(dir, `${dir}.old`);
		await symlink(join(scratch, "elsewhere"), dir);
	},
	"link renamed over the file": async () => {
		await symlink(join(scratch, "elsewhere", "f.txt"), join(dir, ".l"));
		await rename(join(dir, ".l"), path);
	},
	"FIFO renamed over the file": async () => {
		execFileSync("mkfifo", [join(dir, ".fifo")]);
		await rename(join(dir, ".fifo"), path);
	},
};

describe.each(Object.entries(plants))("read when a %s after the stat", (_, plant) => {
	it.each([
		["small", small(0)],
		["large", large(0)],
	])("of a %s file: refused at once, nothing from elsewhere", async (_, text) => {
		await writeFile(path, text);
		let fired = 0;
		const { backend } = afterStat(async () => {
			if (fired++ === 0) await plant();
		});
		const s = await Session.create({ root: join(scratch, "root"), backend });
		try {
			const t0 = Date.now();
			const r = await s.call("read", { path: "a/f.txt" });
			expect(Date.now() - t0).toBeLessThan(5000); // a FIFO was never waited on
			expect(fired).toBe(1);
			expect(JSON.stringify(r)).not.toContain(SECRET);
			expect(r.ok ? "" : r.error.code).toMatch(/^(CHANGED_ON_DISK|NOT_A_FILE)$/);
		} finally {
			await s.close();
		}
	});
});

const makePy = pySessions();

describe.skipIf(NO_PYTHON)("python scriptPath against a rival replacing the script after every stat", () => {
	it("runs the newer script as opened; one replaced by a script over the bound is refused unrun", async () => {
		await writeFile(path, 'print("v0")\n');
		const script = (n: number) => `print("v${n}")\n`;
		const r0 = rival(path, script);
		const { backend, off } = afterStat(r0.replace);
		const traps = await makePy({ dir, session: { backend } });
		const out = await traps.session.call("python", { scriptPath: "f.txt" });
		off();
		expect(out.ok, JSON.stringify(out)).toBe(true);
		expect(r0.count()).toBeGreaterThan(0);
		expect(textOf(out)).toContain(`v${r0.count()}`);
		// Over 8 MiB once replaced: the bound is the opened file's size, not the stat's.
		const huge = rival(path, () => `print("HUGE")\n#${"x".repeat(8 * 1024 * 1024)}\n`);
		await writeFile(path, 'print("v0")\n');
		const big = afterStat(huge.replace);
		const bigPy = await makePy({ dir, session: { backend: big.backend } });
		const r = await bigPy.session.call("python", { scriptPath: "f.txt" });
		big.off();
		expect(r.ok ? "" : r.error.code).toBe("INVALID_ARGS");
		expect(JSON.stringify(r)).not.toContain("HUGE\\n");
		expect(bigPy.python.stats.jobsSent).toBe(0);
	});
});
