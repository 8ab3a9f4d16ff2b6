/**
 * How many file-system calls the path guard makes to resolve a path: on a remote backend each is
 * a round trip. A name whose parent exists (a file about to be made) costs its realpath, the
 * parent's realpath and one lstat, however deep the workspace; a missing directory on the way
 * still walks from "/". Each row also checks the answer, so a shortcut cannot buy calls with a
 * wrong canonical path. Real files, the local backend's FileOps behind a counter.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { FileOps } from "../../src/backend/types.js";
import { PathGuard } from "../../src/safety/path-guard.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "keel-guard-calls-")));
const root = join(base, "a/b/c/d/e/root");
mkdirSync(join(root, "dir"), { recursive: true });
mkdirSync(join(base, "outside"));
symlinkSync(join(base, "outside"), join(root, "out"));
symlinkSync(join(base, "outside/target.txt"), join(root, "dangling"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** The local FileOps, counting realpath and lstat calls. */
function counted(): { fs: FileOps; calls: { realpath: number; lstat: number } } {
	const inner = createLocalBackend().fs;
	const calls = { realpath: 0, lstat: 0 };
	const fs = new Proxy(inner, {
		get(target, key, receiver) {
			const value = Reflect.get(target, key, receiver);
			if (key !== "realpath" && key !== "lstat")
				return typeof value === "function" ? value.bind(target) : value;
			return (...args: unknown[]) => {
				calls[key]++;
				return (value as (...a: unknown[]) => unknown).apply(target, args);
			};
		},
	});
	return { fs, calls };
}

const ROWS = [
	{
		name: "a new file in the root",
		path: "new.txt",
		canonical: join(root, "new.txt"),
		realpath: 2,
		lstat: 1,
	},
	{
		name: "a new file in a directory",
		path: "dir/new.txt",
		canonical: join(root, "dir/new.txt"),
		realpath: 2,
		lstat: 1,
	},
	{
		name: "a new file through a link to the outside: outside, refused",
		path: "out/new.txt",
		canonical: join(base, "outside/new.txt"),
		realpath: 2,
		lstat: 1,
	},
	{
		// The link, then its absolute target walked from "/" (four components).
		name: "a dangling link: its literal target",
		path: "dangling",
		canonical: join(base, "outside/target.txt"),
		realpath: 2,
		lstat: 5,
	},
	{
		name: "a missing directory on the way: the walk from /",
		path: "gone/new.txt",
		canonical: join(root, "gone/new.txt"),
		realpath: 2,
		lstat: 9, // tmp, the temp directory, a to e, root, gone
	},
];

describe("the path guard's calls per resolve", () => {
	it.each(ROWS)("$name", async (row) => {
		const { fs, calls } = counted();
		const guard = await PathGuard.create(fs, { roots: [root], home: base });
		calls.realpath = 0;
		calls.lstat = 0;
		const outcome = await guard.resolve(row.path, "read").then(
			(r) => ({ canonical: r.canonical, exists: r.exists }),
			(e: { code?: string; message?: string }) => ({ code: e.code, message: e.message }),
		);
		if (row.canonical.startsWith(root)) expect(outcome).toEqual({ canonical: row.canonical, exists: false });
		else expect(outcome).toMatchObject({ code: "PATH_OUTSIDE_ROOTS" });
		expect(calls).toEqual({ realpath: row.realpath, lstat: row.lstat });
	});
});
