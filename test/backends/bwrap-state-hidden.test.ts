/**
 * keel's own state read back later (the intent journal, spill files, payloads) must be nothing a
 * sandboxed command can read or plant. Here the home directory lies inside the workspace, so
 * $XDG_STATE_HOME/keel is below a root, and so are a session's spill and payload directories:
 * sandboxed bash tries to read a record there and to plant one, through the long-lived sandbox, a
 * sandbox of its own (a command with stdin) and the Python worker.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxRunner } from "../../src/backend/bwrap/runner.js";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import type { Backend } from "../../src/backend/types.js";
import { bwrapAvailable } from "../contract/backends.js";

const SECRET = "STATE-RECORD-SECRET";

let work = "";
let root = "";
let state = "";
let spill = "";
const savedXdg = process.env.XDG_STATE_HOME;

beforeAll(async () => {
	work = await realpath(await mkdtemp(join(tmpdir(), "keel-bwrap-state-")));
	root = join(work, "ws");
	// The user's home is the workspace: its state directory is inside a root.
	process.env.XDG_STATE_HOME = join(root, ".local", "state");
	state = join(root, ".local", "state", "keel");
	spill = join(root, "keel-spill-test");
	for (const dir of [join(state, "journal", "w"), spill]) {
		await mkdir(dir, { recursive: true });
		await writeFile(join(dir, "record.json"), `{"secret":"${SECRET}"}\n`);
	}
});

afterAll(async () => {
	if (savedXdg === undefined) delete process.env.XDG_STATE_HOME;
	else process.env.XDG_STATE_HOME = savedXdg;
	if (work) await rm(work, { recursive: true, force: true });
});

/** Reads every record below `dir` and plants one, in bash. */
const attack = (dir: string, tag: string) =>
	`cat ${dir}/*/*/record.json ${dir}/record.json 2>&1; ls -A ${dir} 2>/dev/null | sed 's/^/ENTRY /'; ` +
	`mkdir -p ${dir}/journal/w 2>&1; echo planted > ${dir}/journal/w/planted-${tag}.json 2>&1; ` +
	`echo planted > ${dir}/planted-${tag}.json 2>&1; true`;

/** Every planted file below `dir` on the host. */
async function planted(dir: string): Promise<string[]> {
	const names = await readdir(dir, { recursive: true });
	return names.filter((n) => n.includes("planted"));
}

const available = await bwrapAvailable();

describe.skipIf(available !== true)(
	`bwrap: keel's state is not visible inside${available === true ? "" : ` (skipped: ${available})`}`,
	() => {
		it("the state directory and a session's hidden directories: not read, not written, by any path", async () => {
			const b: Backend = createBwrapBackend({ roots: [root] });
			b.hideFromCommands?.([spill]); // what a Session does with its spill and payload directories
			let out = "";
			const onData = (c: Buffer) => {
				out += c.toString("utf8");
			};
			try {
				for (const [dir, tag] of [
					[state, "state"],
					[spill, "spill"],
				] as const) {
					await b.exec.run({ command: attack(dir, `server-${tag}`), cwd: root, onData });
					// The Python worker's path: bwrap started per program, with inherited descriptors.
					const child = b.process?.spawn({
						argv: ["/bin/sh", "-c", attack(dir, `spawned-${tag}`)],
						cwd: root,
						fdPipes: true,
					});
					child?.stdout.on("data", onData);
					child?.stderr.on("data", onData);
					await child?.exited;
				}
			} finally {
				await b.close();
			}
			// A command with stdin: a sandbox of its own.
			const runner = createSandboxRunner({ roots: [root], hidden: [spill] });
			try {
				for (const [dir, tag] of [
					[state, "state"],
					[spill, "spill"],
				] as const) {
					await runner.run(["/bin/sh", "-c", attack(dir, `stdin-${tag}`)], {
						cwd: root,
						stdin: Buffer.from("x\n"),
						onData,
					});
				}
			} finally {
				runner.close();
			}
			expect(out).not.toContain(SECRET);
			expect(out.split("\n").filter((l) => l.startsWith("ENTRY"))).toEqual([]);
			expect(await planted(state)).toEqual([]);
			expect(await planted(spill)).toEqual([]);
			// Everything else in the workspace stays visible and writable.
			expect(existsSync(join(state, "journal", "w", "record.json"))).toBe(true);
		}, 120_000);

		it("the rest of the workspace, the home directory included, stays visible and writable", async () => {
			const b = createBwrapBackend({ roots: [root] });
			let out = "";
			try {
				await b.exec.run({
					command: `echo kept > ${join(root, ".local", "note.txt")} && cat ${join(root, ".local", "note.txt")}`,
					cwd: root,
					onData: (c) => (out += c.toString("utf8")),
				});
			} finally {
				await b.close();
			}
			expect(out).toBe("kept\n");
		}, 60_000);
	},
);
