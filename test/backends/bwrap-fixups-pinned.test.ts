/**
 * After a command, keel moves aside the protected paths it created. Sandboxed code that swaps the
 * created path's directory for a link to a host directory holding the same name, between the scan
 * and the move, must not make keel rename the host's file: the move goes through a handle on the
 * directory opened from the roots without following a link, and refuses instead.
 */
import { existsSync, readdirSync, renameSync, symlinkSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProtectedScan } from "../../src/backend/bwrap/protect.js";
import { moveAsideCreated } from "../../src/backend/bwrap/protect-aside.js";
import { DirPins } from "../../src/backend/local/pin.js";

let work = "";
let root = "";
let outside = "";

beforeEach(async () => {
	work = await realpath(await mkdtemp(join(tmpdir(), "keel-bwrap-fixups-")));
	root = join(work, "ws");
	outside = join(work, "outside");
	await mkdir(join(root, "d"), { recursive: true });
	await mkdir(outside);
	await writeFile(join(root, "d", ".envrc"), "created by the command\n");
	await writeFile(join(outside, ".envrc"), "the host's own\n");
});

afterEach(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

const scan = (existing: string[], absent: string[]): ProtectedScan => ({
	existing,
	absent,
	gitDirs: [],
	truncated: false,
});

describe.skipIf(process.platform !== "linux")(
	"bwrap: fix-ups after a command act through pinned handles",
	() => {
		it.each([
			["a relative link", "../outside"],
			["an absolute link", "OUTSIDE"],
		])("a created .envrc whose directory became %s is not followed", async (_, target) => {
			const created = join(root, "d", ".envrc");
			const before = scan([], [created]);
			const after = scan([created], []);
			// The swap, after the scan saw the real directory: d is now a link to the host directory.
			renameSync(join(root, "d"), join(root, "d.real"));
			symlinkSync(target === "OUTSIDE" ? outside : target, join(root, "d"));
			const pins = new DirPins();
			pins.pin([root]);
			try {
				const notes = await moveAsideCreated(before, after, pins);
				expect(notes.join("\n")).toContain("could not be moved aside");
			} finally {
				pins.close();
			}
			expect(readdirSync(outside)).toEqual([".envrc"]);
			expect(existsSync(join(root, "d.real", ".envrc"))).toBe(true);
		});

		it("without a swap the created path is moved aside in its own directory", async () => {
			const created = join(root, "d", ".envrc");
			const pins = new DirPins();
			pins.pin([root]);
			try {
				const notes = await moveAsideCreated(scan([], [created]), scan([created], []), pins);
				expect(notes.join("\n")).toContain("was moved to");
			} finally {
				pins.close();
			}
			const names = readdirSync(join(root, "d"));
			expect(names).toHaveLength(1);
			expect(names[0]).toMatch(/^\.envrc\.keel-refused-[0-9a-f]{8}$/);
			expect(readdirSync(outside)).toEqual([".envrc"]);
		});
	},
);
