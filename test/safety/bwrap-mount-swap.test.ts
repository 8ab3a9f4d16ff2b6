/**
 * Sandboxed code swaps a workspace directory with a link to a host directory (renameat2
 * RENAME_EXCHANGE, as fast as it can) while other commands keep creating protected entries below
 * it, so every command starts a new sandbox whose binds name that directory. Built by name, bwrap
 * would resolve the link and mount the host directory read-write; keel's fix-ups after a command
 * (moving a created protected path aside, making a repository's hooks directory) would rename and
 * create through it. The host directory holds the very names those fix-ups act on.
 *
 * Over hundreds of sandbox starts: no byte of the host directory is read or written from inside,
 * and nothing in it is created, renamed or removed.
 */
import { existsSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxRunner } from "../../src/backend/bwrap/runner.js";
import { bwrapAvailable } from "../contract/backends.js";
import { NO_PYTHON } from "../python/helpers.js";

const STARTS = 120;
const SECRET = "OUTSIDE-SECRET-BYTES";

/**
 * Exchanges `a` (a directory) with `b` (a link) until `stop` exists, the link under `a` a quarter of
 * the time (for a millisecond at a stretch: most starts still run); prints "swaps N".
 */
const EXCHANGER = `
import ctypes, os, sys, time
a, b, stop = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while not os.path.exists(stop):
    for _ in range(50):
        if libc.renameat2(-100, a, -100, b, 2) == 0: n += 1
        time.sleep(0.001)
        if libc.renameat2(-100, a, -100, b, 2) == 0: n += 1
        time.sleep(0.003)
print("swaps", n)
`;

let work = "";
let root = "";
let outside = "";

/** Every path below `dir` with its inode, so a rename shows as well as a new or missing name. */
function snapshot(dir: string, prefix = ""): string[] {
	const out: string[] = [];
	for (const name of readdirSync(dir).sort()) {
		const path = join(dir, name);
		const st = statSync(path, { throwIfNoEntry: false });
		out.push(`${prefix}${name} ${st?.ino}`);
		if (st?.isDirectory()) out.push(...snapshot(path, `${prefix}${name}/`));
	}
	return out;
}

beforeAll(async () => {
	// Not below the temp directory: other tests sandbox it whole as a root, and their protected-set
	// scan would rightly give the repositories here a hooks directory.
	const base = existsSync("/var/tmp") ? "/var/tmp" : tmpdir();
	work = await realpath(await mkdtemp(join(base, "keel-bwrap-mount-swap-")));
	root = join(work, "ws");
	outside = join(work, "outside");
	await mkdir(join(root, "x"), { recursive: true });
	await writeFile(join(root, "x", "inside.txt"), "inside\n");
	// The names the commands create below x, present behind the link too: a fix-up by name that
	// followed it would rename these (.vscode) or fill these (a repository without hooks).
	await mkdir(outside);
	await writeFile(join(outside, "secret.txt"), `${SECRET}\n`);
	for (let i = 0; i < STARTS; i++) {
		await mkdir(join(outside, `p${i}`, ".vscode"), { recursive: true });
		await mkdir(join(outside, `g${i}`, ".git", "objects"), { recursive: true });
		await mkdir(join(outside, `g${i}`, ".git", "refs"));
		await writeFile(join(outside, `g${i}`, ".git", "HEAD"), "ref: refs/heads/main\n");
	}
	writeFileSync(join(root, "exchanger.py"), EXCHANGER);
});

afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

const bwrap = await bwrapAvailable();
const why = bwrap === true ? (NO_PYTHON ? "python3 not found" : undefined) : bwrap;

describe.skipIf(why !== undefined)(
	`bwrap: a sandbox built while sandboxed code swaps a bind source for a link${why ? ` (skipped: ${why})` : ""}`,
	() => {
		it(`${STARTS} starts under the swap: no host directory mounted, nothing outside created or renamed`, async () => {
			const before = snapshot(outside);
			const runner = createSandboxRunner({ roots: [root] });
			const output = (chunks: Buffer[]) => Buffer.concat(chunks).toString("utf8");
			const stop = join(root, "stop");
			// The link sits beside x; its relative target is the host directory from both names.
			const link = join(root, "x.swap");
			symlinkSync("../outside", link);
			const swapperOut: Buffer[] = [];
			const swapper = runner.run(["/usr/bin/python3", "exchanger.py", "x", "x.swap", stop], {
				cwd: root,
				timeoutMs: 600_000,
				onData: (c) => swapperOut.push(c),
			});
			const leaks: string[] = [];
			let ran = 0;
			let refused = 0;
			let failed = 0;
			try {
				for (let i = 0; i < STARTS; i++) {
					// Each call makes a new protected entry below x (or below x.swap, when the exchange
					// has the directory there): the next call starts a new sandbox binding its directories.
					const chunks: Buffer[] = [];
					const cmd = [
						`for d in x x.swap; do cat $d/secret.txt 2>/dev/null; echo mark > $d/mark-${i} 2>/dev/null; done`,
						`mkdir -p x/p${i}/.vscode 2>/dev/null || mkdir -p x.swap/p${i}/.vscode 2>/dev/null`,
						`mkdir -p x/g${i}/.git/objects x/g${i}/.git/refs 2>/dev/null && echo 'ref: refs/heads/main' > x/g${i}/.git/HEAD 2>/dev/null`,
						`echo ran-${i}`,
					].join("; ");
					try {
						await runner.run(["/bin/sh", "-c", cmd], { cwd: root, onData: (c) => chunks.push(c) });
						if (output(chunks).includes(`ran-${i}`)) ran++;
						else failed++; // bwrap refused to build it (a bind changed under it)
					} catch (e) {
						// A link met while opening a source refuses the start: the command did not run.
						expect((e as { code?: string }).code).toBe("CHANGED_ON_DISK");
						refused++;
					}
					if (output(chunks).includes(SECRET)) leaks.push(`call ${i}: ${output(chunks).slice(0, 200)}`);
				}
			} finally {
				await writeFile(stop, "");
			}
			await swapper;
			runner.close();
			expect(leaks).toEqual([]);
			expect(snapshot(outside)).toEqual(before);
			// The race ran; a call ran in a new sandbox, or keel refused to start it, or bwrap did.
			expect(Number(/swaps (\d+)/.exec(output(swapperOut))?.[1])).toBeGreaterThan(100);
			expect(ran + refused + failed).toBe(STARTS);
			expect(ran).toBeGreaterThanOrEqual(5);
		}, 600_000);
	},
);
