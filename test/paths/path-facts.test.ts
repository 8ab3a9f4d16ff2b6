/**
 * Facts about a path, as the model sees them: each fact a backend reports is provoked through the
 * tools on the local backend with a path spelled otherwise than its canonical form (relative,
 * with `~`, through a link, with `.` and `..`). The message names the path as the model wrote it,
 * word for word the table's; the code and retry class are the catalogue's; `error.path` is the
 * canonical path, for hosts. The same fact reads the same on the exec backend (its scripts
 * through a local transport), whose errors come from its helper scripts' exit codes.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { beforeEach, describe, expect, it } from "vitest";
import { createExecBackend } from "../../src/backend/exec/index.js";
import type { ExecTransport } from "../../src/backend/exec/transport.js";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Backend } from "../../src/backend/types.js";
import { ERROR_CATALOGUE } from "../../src/boundary/errors.js";
import { PATH_FACT_WORDS, type PathFact, pathFactMessage } from "../../src/boundary/path-facts.js";
import type { CallResult, Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";
import { spawnTransport } from "../fixtures/xattrs.js";

// Each test opens its session itself, on the backend it checks.
const ws = useWorkspace({
	prefix: "keel-facts-",
	files: { "src/a.ts": "export const a = 1;\n" },
	session: false,
});
beforeEach(async () => {
	await mkdir(ws().path("src/d"));
	await symlink("a.ts", ws().path("src/link.ts"));
	await symlink("d", ws().path("src/dlink"));
	execFileSync("mkfifo", [ws().path("src/fifo")]);
});

interface Row {
	name: string;
	fact: PathFact;
	/** The path as the model writes it. */
	input: string;
	/** The canonical path it names, relative to the root. */
	canonical: string;
	/** The call that provokes the fact (after `prepare`). */
	call: (s: Session, input: string) => Promise<CallResult>;
	/** Done before the call (a read the call depends on). */
	prepare?: (s: Session) => Promise<CallResult>;
	/** A rival's move just before the commit of `canonical` (inside the backend's commit). */
	rival?: (target: string) => Promise<void>;
}

const write = (s: Session, path: string) => s.call("write", { path, content: "ours\n" });
const read = (s: Session, path: string) => s.call("read", { path });
const edit = (s: Session, path: string) =>
	s.call("edit", { path, edits: [{ oldText: "a = 1", newText: "a = 2" }] });

const ROWS: Row[] = [
	{
		name: "a rival write between read and write, through a link",
		fact: "changed-since-read",
		input: "src/link.ts",
		canonical: "src/a.ts",
		prepare: (s) => s.call("read", { path: "src/link.ts" }),
		call: write,
		rival: (t) => writeFile(t, "theirs\n"),
	},
	{
		name: "a rival write between read and write, with . and ..",
		fact: "changed-since-read",
		input: "./src/d/../a.ts",
		canonical: "src/a.ts",
		prepare: (s) => s.call("read", { path: "src/a.ts" }),
		call: write,
		rival: (t) => writeFile(t, "theirs\n"),
	},
	{
		name: "a rival creating the file a write creates",
		fact: "already-exists",
		input: "src/new.ts",
		canonical: "src/new.ts",
		call: write,
		rival: (t) => writeFile(t, "theirs\n"),
	},
	{
		name: "read of a missing file",
		fact: "not-found",
		input: "src/missing.ts",
		canonical: "src/missing.ts",
		call: read,
	},
	{
		name: "edit of a missing file, with ~",
		fact: "not-found",
		input: "~/src/missing.ts",
		canonical: "src/missing.ts",
		call: edit,
	},
	{
		name: "edit of a directory, through a link",
		fact: "is-a-directory",
		input: "src/dlink",
		canonical: "src/d",
		call: edit,
	},
	{ name: "read of a directory", fact: "is-a-directory", input: "src/d", canonical: "src/d", call: read },
	{ name: "read of a FIFO", fact: "not-a-file", input: "src/fifo", canonical: "src/fifo", call: read },
	{
		name: "read below a file",
		fact: "not-a-directory",
		input: "src/a.ts/x",
		canonical: "src/a.ts/x",
		call: read,
	},
];

/** The backend for a row: local with the rival in its commit hook, or exec (rows without a rival). */
const BACKENDS = {
	local: (row: Row, racing: () => boolean): Backend =>
		createLocalBackend({
			hooks: {
				beforeCommit: async (target) => {
					if (racing() && row.rival && target === ws().path(row.canonical)) await row.rival(target);
				},
			},
		}),
	exec: (): Backend => createExecBackend({ transport: spawnTransport() }),
};

describe.each(Object.keys(BACKENDS) as (keyof typeof BACKENDS)[])(
	"%s: a fact about a path names the path as the model wrote it",
	(kind) => {
		for (const row of ROWS) {
			if (kind !== "local" && row.rival) continue;
			it(`${row.fact}: ${row.name} (${row.input})`, async () => {
				let racing = false;
				const backend = BACKENDS[kind](row, () => racing);
				const s = await ws().open({ home: ws().root, backend, profile: "pi" });
				if (row.prepare) expect((await row.prepare(s)).ok).toBe(true);
				racing = true;
				const r = await row.call(s, row.input);
				expect(r.ok, JSON.stringify(r)).toBe(false);
				if (r.ok) return;
				const { code } = PATH_FACT_WORDS[row.fact];
				expect(r.error.code).toBe(code);
				expect(r.error.retry).toBe(ERROR_CATALOGUE[code]);
				expect(r.error.message).toBe(pathFactMessage(row.fact, row.input));
				expect(r.error.path).toBe(ws().path(row.canonical));
				// The refused call changed nothing: a rival's bytes stay, ours never land.
				if (row.rival) expect(await readFile(ws().path(row.canonical), "utf8")).toBe("theirs\n");
			});
		}
	},
);

describe("the fact table", () => {
	it("gives every fact a catalogued code and words that name the path", () => {
		for (const [fact, entry] of Object.entries(PATH_FACT_WORDS)) {
			expect(ERROR_CATALOGUE, fact).toHaveProperty(entry.code);
			for (const during of [false, true]) {
				const words = pathFactMessage(fact as PathFact, "some/where.ts", { during });
				expect(words, fact).toContain("some/where.ts");
				expect(words.length, fact).toBeGreaterThan("some/where.ts".length + 10);
			}
		}
	});
});

/** A process holding `path` open for writing until it is ended: its pid. */
async function holdOpenForWriting(path: string): Promise<{ pid: number; end: () => void }> {
	const child = spawn("sh", ["-c", 'exec 3>>"$1"; echo ready; read line', "sh", path]);
	await new Promise<void>((resolve, reject) => {
		child.stdout.once("data", () => resolve());
		child.once("error", reject);
	});
	return { pid: child.pid as number, end: () => child.stdin.end("done\n") };
}

describe("facts moved out of the backends name the model's path", () => {
	it("local: a file open for writing by another process, edited through a link", async () => {
		const s = await ws().open({ home: ws().root, backend: createLocalBackend(), profile: "pi" });
		const holder = await holdOpenForWriting(ws().path("src/a.ts"));
		try {
			expect((await read(s, "src/link.ts")).ok).toBe(true);
			const r = await edit(s, "src/link.ts");
			expect(r.ok, JSON.stringify(r)).toBe(false);
			if (r.ok) return;
			expect(r.error.code).toBe("FILE_BUSY");
			expect(r.error.retry).toBe("retry");
			expect(r.error.path).toBe(ws().path("src/a.ts"));
			expect(r.error.message).toBe(
				pathFactMessage("open-for-writing", "src/link.ts", { holders: [{ pid: holder.pid, command: "sh" }] }),
			);
		} finally {
			holder.end();
			await s.close();
		}
		expect(await readFile(ws().path("src/a.ts"), "utf8")).toBe("export const a = 1;\n");
	});

	it("exec: content cut short by the transport, written with . and ..", async () => {
		const whole = spawnTransport();
		// The transport drops the second half of what it sends: the helper sees the write arrive short.
		const halfStdin: ExecTransport = (argv, o) =>
			whole(argv, {
				...o,
				stdin: o.stdin instanceof Uint8Array ? o.stdin.subarray(0, o.stdin.length >> 1) : o.stdin,
			});
		const backend = createExecBackend({ transport: halfStdin });
		const s = await ws().open({ home: ws().root, backend, profile: "pi" });
		try {
			expect((await read(s, "src/a.ts")).ok).toBe(true);
			const r = await s.call("write", { path: "./src/d/../a.ts", content: "x".repeat(100_000) });
			expect(r.ok, JSON.stringify(r)).toBe(false);
			if (r.ok) return;
			expect(r.error.code).toBe("IO_ERROR");
			expect(r.error.path).toBe(ws().path("src/a.ts"));
			expect(r.error.message).toBe(pathFactMessage("arrived-incomplete", "./src/d/../a.ts"));
		} finally {
			await s.close();
		}
		expect(await readFile(ws().path("src/a.ts"), "utf8")).toBe("export const a = 1;\n");
	});
});

describe.each(Object.keys(BACKENDS) as (keyof typeof BACKENDS)[])(
	"%s: tools word their path facts through the table, for the model's path",
	(kind) => {
		const open = () =>
			ws().open({ home: ws().root, backend: BACKENDS[kind](ROWS[0], () => false), profile: "unified" });
		const expectFact = (r: CallResult, fact: PathFact, shown: string, canonical: string, extras = {}) => {
			expect(r.ok, JSON.stringify(r)).toBe(false);
			if (r.ok) return;
			expect(r.error.code).toBe(PATH_FACT_WORDS[fact].code);
			expect(r.error.message).toBe(pathFactMessage(fact, shown, extras));
			expect(r.error.path).toBe(ws().path(canonical));
		};

		it("ls of a file through a link", async () => {
			const s = await open();
			try {
				expectFact(
					await s.call("ls", { path: "src/link.ts" }),
					"wants-a-directory",
					"src/link.ts",
					"src/a.ts",
				);
			} finally {
				await s.close();
			}
		});

		it("apply_patch deleting a directory and a FIFO, spelled with . and ..", async () => {
			const s = await open();
			try {
				const del = (path: string) =>
					s.call("apply_patch", { input: `*** Begin Patch\n*** Delete File: ${path}\n*** End Patch` });
				expectFact(await del("./src/d/../d"), "delete-wants-a-file", "./src/d/../d", "src/d", {
					operation: '"*** Delete File:"',
				});
				expectFact(await del("src/d/../fifo"), "not-a-file-or-link", "src/d/../fifo", "src/fifo");
			} finally {
				await s.close();
			}
			expect(execFileSync("ls", [ws().path("src")], { encoding: "utf8" }).split("\n")).toContain("fifo");
		});
	},
);
