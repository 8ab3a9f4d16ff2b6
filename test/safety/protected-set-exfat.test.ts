/**
 * Other spellings of protected names on a real case-insensitive file system: an exFAT image on a
 * loop device, mounted with exfat-fuse (root, losetup, mkfs.exfat and mount.exfat-fuse; skipped
 * with the reason when the mount cannot be made). There `.GIT/Config` is `.git/config`: every
 * spelling is refused and the file under that name stays as it was.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectProtected, git, open, snapshot, writeThrough } from "./protected-fixtures.js";

/** An exFAT image on a loop device, mounted with exfat-fuse; undefined (and why) when that cannot be done here. */
async function mountExfat(at: string): Promise<{ dir: string; unmount: () => void } | string> {
	const image = `${at}.img`;
	const run = (cmd: string, ...args: string[]) =>
		execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
	let loop = "";
	try {
		await mkdir(at);
		run("truncate", "-s", "64M", image);
		run("mkfs.exfat", image);
		loop = run("losetup", "-f", "--show", image);
		run("mount.exfat-fuse", loop, at);
	} catch (e) {
		if (loop) run("losetup", "-d", loop);
		return `exFAT loop mount not possible here (${(e as Error).message.split("\n")[0]})`;
	}
	return {
		dir: at,
		unmount: () => {
			run("umount", at);
			run("losetup", "-d", loop);
		},
	};
}

describe("a case-insensitive file system (exFAT loop mount): other spellings are the protected files", async () => {
	const scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-ci-")));
	const mounted = await mountExfat(join(scratch, "disk"));
	afterAll(async () => {
		if (typeof mounted !== "string") mounted.unmount();
		await rm(scratch, { recursive: true, force: true });
	});
	if (typeof mounted === "string") {
		it.skip(mounted, () => {});
		return;
	}
	const root = join(mounted.dir, "ws");
	beforeAll(async () => {
		await mkdir(root);
		git(root, "init", "-q");
		await mkdir(join(root, ".vscode"));
		await writeFile(join(root, ".vscode", "tasks.json"), "{}\n");
		await writeFile(join(root, ".envrc"), "use nix\n");
	});

	it("the mount folds case (the premise of this describe)", async () => {
		expect(await readFile(join(root, ".ENVRC"), "utf8")).toBe("use nix\n");
		expect(await readFile(join(root, ".GIT", "Config"), "utf8")).toContain("[core]");
	});

	const SPELLINGS = [
		".git/CONFIG",
		".git/HOOKS/pre-commit",
		".GIT/hooks/post-checkout",
		".Git/Config",
		".ENVRC",
		".VSCODE/tasks.json",
		".VSCode/settings.json",
		".BashRC",
		"LEFTHOOK.YML",
		".git/head",
	];
	it.each(SPELLINGS)("%s is refused and the file under that name is unchanged", async (path) => {
		const s = await open(root);
		const before = await snapshot(root);
		expectProtected(await writeThrough(s, path), path);
		expect(await snapshot(root)).toEqual(before);
	});
});
