/**
 * Checkpoints against an attacker: a directory swapped for a link to the outside while the scan
 * walks (nothing from the outside may reach the store or an index), and keel's own store read
 * back as hostile input (a damaged blob, a blob swapped for a link to another file, a planted
 * name: none is ever restored into the workspace).
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	symlinkSync,
	unlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BlobStore } from "../../src/checkpoints/blob-store.js";
import { scanTree } from "../../src/checkpoints/tree-scan.js";
import { DEFAULT_BUDGETS } from "../../src/checkpoints/types.js";
import { createSession } from "../../src/index.js";
import { makeSwapTrees, swapsDone } from "../fixtures/dir-link-swapper.js";
import { NO_PYTHON, PYTHON } from "../python/helpers.js";
import { snapshot } from "./tree.js";

let work: string;
beforeEach(() => {
	work = realpathSync(mkdtempSync(join(tmpdir(), "keel-undo-hostile-")));
});
afterEach(() => {
	rmSync(work, { recursive: true, force: true });
});

const SECRET_NAME = "outside-secret-name";
const SECRET_TEXT = "secret-bytes-from-outside\n";

/**
 * The swapper: the link stays in place as long as the directory does (a scan that opens the
 * directory by name at any moment meets the link half the time). Args: inner target stop.
 */
const HOLDING_SWAPPER = `
import os, sys, time
inner, target, stop = sys.argv[1], sys.argv[2], sys.argv[3]
aside = inner + ".aside"
n = 0
while not os.path.exists(stop):
    os.rename(inner, aside)
    os.symlink(target, inner)
    time.sleep(0.0005)
    os.unlink(inner)
    os.rename(aside, inner)
    time.sleep(0.0005)
    n += 1
print("swaps", n)
`;

describe.skipIf(NO_PYTHON)("the scan against a directory swapped for a link mid-walk", () => {
	it("200 scans keep nothing from the outside: no path, no bytes", async () => {
		const tree = join(work, "tree");
		const outside = join(work, "outside");
		const inner = makeSwapTrees({
			tree,
			outside,
			secretName: SECRET_NAME,
			insideText: "x\n",
			outsideText: SECRET_TEXT,
		});
		const storeDir = join(work, "store");
		mkdirSync(storeDir);
		const store = new BlobStore(storeDir);
		const stop = join(work, "stop");
		const proc: ChildProcess = spawn(PYTHON!, ["-c", HOLDING_SWAPPER, inner, outside, stop], {
			stdio: ["ignore", "pipe", "inherit"],
		});
		let out = "";
		proc.stdout!.on("data", (c) => {
			out += c;
		});
		const swaps = new Promise<number>((resolve) => proc.on("close", () => resolve(swapsDone(out))));
		const leaks: string[] = [];
		let sawInner = 0;
		try {
			let previous: ReturnType<typeof scanTree>["index"] | undefined;
			for (let i = 0; i < 200; i++) {
				// No previous index every other time: every file is read again, not only changed ones.
				const scan = scanTree({
					roots: [tree],
					previous: i % 2 ? previous : undefined,
					store,
					budgets: DEFAULT_BUDGETS,
					room: 1e9,
				});
				previous = scan.index;
				for (const p of scan.index.keys())
					if (p.includes(SECRET_NAME) || !p.startsWith(`${tree}/`)) leaks.push(`scan #${i}: ${p}`);
				if (scan.index.has(join(inner, "sub/own.txt"))) sawInner++;
				await new Promise((r) => setImmediate(r));
			}
		} finally {
			writeFileSync(stop, "");
		}
		const done = await swaps;
		for (const name of readdirSync(storeDir))
			if (readFileSync(join(storeDir, name), "utf8").includes("secret-bytes")) leaks.push(`blob ${name}`);
		expect(leaks).toEqual([]);
		expect(done).toBeGreaterThan(20);
		expect(sawInner).toBeGreaterThan(0);
	}, 120_000);
});

describe("the store is read back as hostile input", () => {
	async function changedSession() {
		const root = join(work, "ws");
		mkdirSync(root);
		writeFileSync(join(root, "a.txt"), "original\n");
		const stateDir = join(work, "state");
		const session = await createSession({ root, profile: "unified", stateDir, checkpoints: true });
		const r = await session.call("bash", { command: "echo changed > a.txt" });
		expect(r.ok).toBe(true);
		const base = join(stateDir, "checkpoints");
		const store = join(base, readdirSync(base).find((n) => n.startsWith("session-"))!);
		return { root, session, store };
	}

	const TAMPER: Array<[string, (blob: string) => void]> = [
		["a blob rewritten with other bytes", (blob) => writeFileSync(blob, "planted by an attacker\n")],
		[
			"a blob swapped for a link to another file",
			(blob) => {
				writeFileSync(join(work, "elsewhere.txt"), "planted by an attacker\n");
				unlinkSync(blob);
				symlinkSync(join(work, "elsewhere.txt"), blob);
			},
		],
		["a blob removed", (blob) => unlinkSync(blob)],
	];

	it.each(TAMPER)(
		"%s: the restore changes nothing and says the bytes are damaged",
		async (_label, tamper) => {
			const { root, session, store } = await changedSession();
			try {
				for (const name of readdirSync(store)) tamper(join(store, name));
				const before = snapshot(root);
				const r = await session.call("checkpoints", { action: "restore" });
				expect(r.ok).toBe(false);
				if (!r.ok) {
					expect(r.error.code).toBe("RESTORE_CONFLICT");
					expect(r.error.message).toContain("missing or damaged");
				}
				expect(snapshot(root)).toEqual(before);
				expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("changed\n");
			} finally {
				await session.close();
			}
		},
	);

	it("a stale store of a dead process is removed, a live one's is left alone", async () => {
		const base = join(work, "state", "checkpoints");
		mkdirSync(base, { recursive: true, mode: 0o700 });
		const dead = join(base, "session-999999999-1-abcd");
		mkdirSync(dead);
		writeFileSync(join(dead, "x"), "old");
		const root = join(work, "ws2");
		mkdirSync(root);
		const first = await createSession({ root, stateDir: join(work, "state"), checkpoints: true });
		const second = await createSession({ root, stateDir: join(work, "state"), checkpoints: true });
		try {
			const names = readdirSync(base);
			expect(names).not.toContain("session-999999999-1-abcd");
			expect(names.filter((n) => n.startsWith(`session-${process.pid}-`))).toHaveLength(2);
		} finally {
			await first.close();
			await second.close();
		}
	});
});
