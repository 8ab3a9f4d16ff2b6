/**
 * sdk_wrapper.sh, what carries a command's bytes through a sandbox SDK's text-only channel, run
 * directly (no SDK): in mode i (the persistent shells) it hands the run to sdk_relay.py where
 * python3 exists, and relays in sh where it does not. Each row runs on both, against the same
 * protocol: a newline first on both streams, ":B64" lines out, "!STATUS" last, "#N" + base64
 * lines in up to ".". The sh-only runs get a PATH holding the tools the wrapper uses and no python3.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inputLines, wrapped } from "../../src/backend/container/sdk-process.js";

/** Every byte value, a "." line and a "#3" line: what the wrapper must carry untouched. */
const EVERY_BYTE = Buffer.concat([
	Buffer.from(".\n#3\n"),
	Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
]);

const work = mkdtempSync(join(tmpdir(), "keel-sdk-wrapper-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A PATH with what the sh relay and the rows' programs use, and no python3. */
function shOnlyPath(): string {
	const bin = join(work, "bin");
	mkdirSync(bin);
	for (const tool of ["sh", "dd", "base64", "head", "mktemp", "mkfifo", "rm", "cat", "sleep", "kill"]) {
		const at = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
		if (at.startsWith("/")) symlinkSync(at, join(bin, tool));
	}
	return bin;
}

const RELAYS = [
	// The system's python3 first (a version manager's shim costs a third of a second per start).
	{ relay: "python3 (sdk_relay.py)", path: `/usr/bin:/bin:${process.env.PATH ?? ""}`, parent: /^python3/ },
	{ relay: "sh", path: shOnlyPath(), parent: /^(sh|dash|bash)$/ },
];

interface Run {
	stdout: Buffer[];
	stderr: Buffer[];
	statuses: string[];
	/** What came before the first ":" line on stdout (the login-shell newline). */
	first: string;
	/** Each stream's lines in order, ":" data lines decoded ("!" lines kept). */
	order: string[];
}

function run(path: string, argv: string[], input: string): Run {
	const r = spawnSync(wrapped("i", argv)[0], wrapped("i", argv).slice(1), {
		input,
		env: { PATH: path },
		timeout: 20_000,
		maxBuffer: 64 * 1024 * 1024,
	});
	const lines = r.stdout.toString("latin1").split("\n");
	const decode = (ls: string[]) =>
		ls.filter((l) => l.startsWith(":")).map((l) => Buffer.from(l.slice(1), "base64"));
	const err = r.stderr.toString("latin1").split("\n");
	return {
		stdout: decode(lines),
		stderr: decode(err),
		statuses: lines.filter((l) => l.startsWith("!")),
		first: lines[0],
		order: lines
			.filter((l) => l.startsWith(":") || l.startsWith("!"))
			.map((l) => (l.startsWith(":") ? Buffer.from(l.slice(1), "base64").toString("latin1") : l)),
	};
}

const ROWS: { name: string; argv: string[]; input: Buffer | undefined; check: (r: Run) => void }[] = [
	{
		name: "every byte in and out, stderr apart, the status last",
		argv: ["sh", "-c", "cat; echo err >&2; exit 5"],
		input: EVERY_BYTE,
		check: (r) => {
			expect(r.first).toBe(""); // the newline that ends what a login shell printed
			expect(Buffer.concat(r.stdout).equals(EVERY_BYTE)).toBe(true);
			expect(Buffer.concat(r.stderr).toString()).toBe("err\n");
			expect(r.statuses).toEqual(["!5"]);
		},
	},
	{
		name: "a megabyte through cat, in several input lines",
		argv: ["cat"],
		input: Buffer.alloc(1024 * 1024, "keel\n"),
		check: (r) => {
			expect(Buffer.concat(r.stdout).equals(Buffer.alloc(1024 * 1024, "keel\n"))).toBe(true);
			expect(r.statuses).toEqual(["!0"]);
		},
	},
	{
		name: "a program killed by a signal: 128 + its number",
		argv: ["sh", "-c", "kill -9 $$"],
		input: undefined,
		check: (r) => expect(r.statuses).toEqual(["!137"]),
	},
	{
		name: "a program that ends before its input: the run ends, with its status",
		argv: ["sh", "-c", "exit 3"],
		input: Buffer.alloc(512 * 1024, "x"),
		check: (r) => expect(r.statuses).toEqual(["!3"]),
	},
	{
		name: "a background child holding the output: its line comes before the status",
		argv: ["sh", "-c", "(sleep 0.3; echo late) & echo now"],
		input: undefined,
		check: (r) => {
			expect(r.order.join("")).toBe("now\nlate\n!0");
		},
	},
	{
		name: "a program that does not exist: 127",
		argv: ["no-such-program-keel"],
		input: undefined,
		check: (r) => expect(r.statuses).toEqual(["!127"]),
	},
];

describe.each(RELAYS)("sdk_wrapper.sh mode i, relayed by $relay", ({ path, parent }) => {
	it.each(ROWS)("$name", (row) => {
		const input = `${row.input ? inputLines(row.input) : ""}.\n`;
		row.check(run(path, row.argv, input));
	});

	it("the program runs under that relay", () => {
		const r = run(path, ["sh", "-c", "cat /proc/$PPID/comm"], ".\n");
		expect(Buffer.concat(r.stdout).toString().trim()).toMatch(parent);
	});
});
