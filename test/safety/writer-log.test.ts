/**
 * The writer logs of dead keel processes, as a new session finds them in the state directory: a
 * log is dropped once every directory it names was swept or no longer exists, so logs of deleted
 * workspaces do not pile up (each session reads every log there is); a directory that still
 * exists outside the session's roots keeps its log and is never touched; a live writer's log stays.
 */
import { spawnSync } from "node:child_process";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Session } from "../../src/session.js";

let base: string;
let state: string;
let root: string;
let outside: string;

beforeEach(() => {
	base = mkdtempSync(join(tmpdir(), "keel-writerlog-"));
	state = join(base, "state");
	root = join(base, "root");
	outside = join(base, "outside");
	for (const d of [state, join(state, "writers"), root, outside]) mkdirSync(d, { mode: 0o700 });
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

/** The pid of a process that has ended (and been reaped). */
const deadPid = () => spawnSync("true").pid as number;

/** Field 22 of /proc/<pid>/stat: the start time a writer log's name carries. */
function startTime(pid: number): string {
	const text = readFileSync(`/proc/${pid}/stat`, "latin1");
	return text.slice(text.lastIndexOf(")") + 2).split(" ")[19];
}

/** A writer log as keel writes it: one JSON directory per line, a private file of this user. */
function plantLog(name: string, dirs: string[]): string {
	const file = join(state, "writers", name);
	writeFileSync(file, dirs.map((d) => `${JSON.stringify(d)}\n`).join(""), { mode: 0o600 });
	return file;
}

/** A temp file with the name a writer `pid` gives one. */
function plantTemp(dir: string, pid: number): string {
	const file = join(dir, `.keel-tmp-${pid}-0123456789ab-f.txt`);
	writeFileSync(file, "half-written\n");
	return file;
}

async function openAndClose(): Promise<void> {
	const s = await Session.create({ root, stateDir: state });
	await s.close();
}

it.skipIf(process.platform !== "linux")(
	"a dead writer's log naming only directories that are gone is removed",
	async () => {
		const file = join(base, "a-file");
		writeFileSync(file, "");
		const log = plantLog(`${deadPid()}-1`, [join(base, "deleted-workspace"), join(file, "under-a-file")]);
		await openAndClose();
		expect(existsSync(log)).toBe(false);
	},
);

it.skipIf(process.platform !== "linux")(
	"a log naming a directory inside the roots and one that is gone: the temp file is swept, the log removed",
	async () => {
		const pid = deadPid();
		const temp = plantTemp(root, pid);
		const log = plantLog(`${pid}-1`, [root, join(base, "deleted-workspace")]);
		await openAndClose();
		expect(existsSync(temp)).toBe(false);
		expect(existsSync(log)).toBe(false);
	},
);

it.skipIf(process.platform !== "linux")(
	"a directory outside the roots that still exists (or a dangling link there) keeps the log, and nothing in it is touched",
	async () => {
		const pid = deadPid();
		const temp = plantTemp(outside, pid);
		const link = join(base, "dangling");
		symlinkSync(join(base, "nowhere"), link);
		const kept = plantLog(`${pid}-1`, [outside, join(base, "deleted-workspace")]);
		const linked = plantLog(`${deadPid()}-1`, [link]);
		await openAndClose();
		expect(existsSync(kept)).toBe(true);
		expect(existsSync(linked)).toBe(true);
		expect(readFileSync(temp, "utf8")).toBe("half-written\n");
	},
);

it.skipIf(process.platform !== "linux")("a live writer's log stays, whatever it names", async () => {
	// The process that started this test file is running: its log is not this session's to judge.
	const log = plantLog(`${process.ppid}-${startTime(process.ppid)}`, [join(base, "deleted-workspace")]);
	await openAndClose();
	expect(existsSync(log)).toBe(true);
});
