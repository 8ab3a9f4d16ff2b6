/**
 * The kept protected-set scan when the kernel refuses watches (ENOSPC): a child process in a user
 * namespace whose `max_inotify_watches` is lowered to 1,000 (the limit is per user namespace, so
 * nothing else on the machine is touched) scans a 2,000-directory workspace. The watches run out,
 * the scan is kept by stat'ing, and a repository planted afterwards is still found. Host-side (no
 * bwrap); needs `unshare --user` and the built dist/.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../fixtures/keel-cli.js";

const dist = (f: string) => join(REPO, "dist/backend/bwrap", f);
const userns = spawnSync("unshare", ["--user", "--map-root-user", "true"]).status === 0;
const missing = !userns
	? "no unshare --user"
	: !existsSync(dist("protect-cache.js"))
		? "no dist/ (npm run build)"
		: "";

let scratch: string;
let root: string;

beforeAll(async () => {
	if (missing) return;
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-limit-")));
	root = join(scratch, "root");
	for (let a = 0; a < 20; a++) {
		await Promise.all(
			Array.from({ length: 100 }, (_, b) => mkdir(join(root, `d${a}`, `e${b}`), { recursive: true })),
		);
	}
	await mkdir(join(scratch, "home"));
	execFileSync("git", ["init", "-q", root]);
	await new Promise((r) => setTimeout(r, 2_200)); // older than the stat check's racy window
}, 60_000);
afterAll(async () => {
	if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe.skipIf(missing !== "")(`the real watch limit${missing ? ` (skipped: ${missing})` : ""}`, () => {
	it("ENOSPC from the kernel: the scan is kept by stat'ing, and a new repository is still found", async () => {
		const script = join(scratch, "limit.mjs");
		await writeFile(
			script,
			`import { ProtectedScanCache } from ${JSON.stringify(dist("protect-cache.js"))};
import { scanProtected } from ${JSON.stringify(dist("protect.js"))};
import { DirWatches } from ${JSON.stringify(dist("dir-watches.js"))};
import { lazyInotify } from ${JSON.stringify(dist("inotify.js"))};
import { execFileSync } from "node:child_process";
const root = ${JSON.stringify(root)};
const probe = DirWatches.open(lazyInotify()());
for (let a = 0; a < 20 && probe.complete; a++) for (let b = 0; b < 100; b++) probe.watch(root + "/d" + a + "/e" + b);
const limited = { complete: probe.complete, count: probe.count };
probe.close();
const opts = { roots: [root], home: ${JSON.stringify(join(scratch, "home"))} };
const cache = new ProtectedScanCache();
await cache.scan(opts);
const first = { mode: cache.mode, counts: { ...cache.counts } };
execFileSync("git", ["init", "-q", root + "/d16/e3/v"]);
const after = await cache.scan(opts);
const fresh = await scanProtected(opts);
// The same sets (the order of what one level's concurrent reads find varies).
const sorted = (x) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, Array.isArray(v) ? [...v].sort() : v]));
process.stdout.write(JSON.stringify({ limited, first, gitDirs: after.gitDirs, after: sorted(after), fresh: sorted(fresh) }));
`,
		);
		const out = execFileSync(
			"unshare",
			[
				"--user",
				"--map-root-user",
				"sh",
				"-c",
				`echo 1000 > /proc/sys/user/max_inotify_watches && exec "$0" "$1"`,
				process.execPath,
				script,
			],
			{ encoding: "utf8" },
		);
		const res = JSON.parse(out);
		expect(res.limited).toEqual({ complete: false, count: expect.any(Number) });
		expect(res.limited.count).toBeLessThanOrEqual(1000);
		expect(res.first.mode).toBe("stat");
		expect(res.first.counts).toMatchObject({ full: 1, watched: 0 });
		expect(res.gitDirs).toContain(join(root, "d16/e3/v/.git"));
		expect(res.after).toEqual(res.fresh);
	}, 60_000);
});
