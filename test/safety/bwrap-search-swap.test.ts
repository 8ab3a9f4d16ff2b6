/**
 * Code inside the bwrap sandbox swaps a directory of the workspace for a link to a host directory
 * the sandbox cannot see, as fast as it can, while grep and find run. rg and fd walk by name: run
 * on the host they would follow the link and report what lies behind it. On bwrap they run inside
 * the sandbox (bwrap/search-tools.ts), where the link leads nowhere: no name or byte from the host
 * directory may reach a result.
 */
import { writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import { type CallResult, Session } from "../../src/session.js";
import { bwrapAvailable } from "../contract/backends.js";
import { DIR_LINK_SWAPPER, makeSwapTrees, swapsDone } from "../fixtures/dir-link-swapper.js";
import { NO_PYTHON } from "../python/helpers.js";

const SECRET = "HOSTSECRETBYTES";
const SECRET_NAME = "host-only-name";
const RUNS = 100;

let work = "";
let root = "";
let hostOnly = "";
let inner = "";

beforeAll(async () => {
	work = await realpath(await mkdtemp(join(tmpdir(), "keel-bwrap-search-swap-")));
	root = join(work, "root");
	hostOnly = join(work, "host-only");
	// Behind the link: the same names as inside, and names of its own, all holding the secret.
	inner = makeSwapTrees({
		tree: root,
		outside: hostOnly,
		secretName: SECRET_NAME,
		insideText: "inside\n",
		outsideText: `${SECRET}\n`,
	});
	writeFileSync(join(root, "swapper.py"), DIR_LINK_SWAPPER);
});

afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

const bwrap = await bwrapAvailable();
const why = bwrap === true ? (NO_PYTHON ? "python3 not found" : undefined) : bwrap;
const textOf = (r: CallResult) => JSON.stringify(r);

describe.skipIf(why !== undefined)(
	`bwrap: grep and find against a swapper in the sandbox${why ? ` (skipped: ${why})` : ""}`,
	() => {
		it(`${RUNS} greps and finds report nothing from the host directory behind the link`, async () => {
			const s = await Session.create({ root, backend: createBwrapBackend({ roots: [root] }) });
			const stop = join(root, "stop"); // inside the root: the sandboxed swapper must see it
			// The swapper is sandboxed code: started by the bash tool, it runs until the stop file appears.
			const running = s.call("bash", {
				command: `python3 swapper.py ${inner} ${hostOnly} ${stop}`,
				timeout: 300,
			});
			const leaks: string[] = [];
			let innerSeen = 0;
			try {
				for (let i = 0; i < RUNS; i++) {
					const g = await s.call("grep", { pattern: "HOSTSECRET|inside", path: "a" });
					const f = await s.call("find", { pattern: "*", path: "a", limit: 1000 });
					for (const [name, r] of [
						["grep", g],
						["find", f],
					] as const) {
						const t = textOf(r);
						if (t.includes(SECRET) || t.includes(SECRET_NAME))
							leaks.push(`${name} #${i}: ${t.slice(0, 300)}`);
					}
					if (textOf(g).includes("inner/sub/own.txt")) innerSeen++;
					if (leaks.length > 0) break; // one is a failure already
				}
			} finally {
				await writeFile(stop, "");
			}
			const swapped = textOf(await running);
			await s.close();
			expect(leaks).toEqual([]);
			// The race ran, and the searches still found the real directory's file at times.
			expect(swapsDone(swapped)).toBeGreaterThan(0);
			expect(innerSeen).toBeGreaterThan(0);
		}, 400_000);
	},
);
