/**
 * All-or-nothing across a power loss, under a file-system model that keeps only what was fsynced.
 * Each operation of traced-commits.ts (an apply_patch over five files, a `file` batch, a single
 * edit) is run once under strace, which records every file-affecting call with its data (-xx -s)
 * and the path behind every descriptor (-y). The calls are replayed on a model of the workspace
 * and state directory in which, separately:
 *   - a file's bytes survive a power loss only as of its last fsync (or fdatasync); a file never
 *     synced comes back empty;
 *   - a directory's entries (creates, links, renames, unlinks, mkdirs, rmdirs in it) survive only
 *     as of the last fsync of that directory; a directory never synced since it was made comes
 *     back empty, and only if its own entry in its parent survived.
 * Nothing is assumed about the order in which unsynced changes reach the disk (ext4's ordered
 * metadata would give more). After every fsync of the operation (the only calls that change what
 * the model keeps), that state is written out in place, a new session opens on it (its recovery runs) and the workspace must be
 * all-old or all-new, with no keel temp file left in it.
 * Skipped when strace is missing or cannot attach.
 */
import {
	chmodSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	readlinkSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { join, posix } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Session } from "../../src/session.js";
import { classify, FILE_SYSCALLS, Lab, MARKERS, OPS, prepare, runOp, tree } from "./traced-commits.js";

interface Inode {
	data: Buffer;
	durable: Buffer;
	mode: number;
}
type Entry = { kind: "file"; ino: Inode } | { kind: "dir"; dir: Dir };
interface Dir {
	entries: Map<string, Entry>;
	durable: Map<string, Entry>;
	mode: number;
}

const UMASK = 0o022;

/** The model of `base` as it is on disk now: everything durable. */
function load(path: string): Dir {
	const dir: Dir = { entries: new Map(), durable: new Map(), mode: lstatSync(path).mode & 0o7777 };
	for (const name of readdirSync(path)) {
		const p = join(path, name);
		const st = lstatSync(p);
		const e: Entry = st.isDirectory()
			? { kind: "dir", dir: load(p) }
			: { kind: "file", ino: { data: readFileSync(p), durable: readFileSync(p), mode: st.mode & 0o7777 } };
		dir.entries.set(name, e);
	}
	dir.durable = new Map(dir.entries);
	return dir;
}

/** Write the model's durable state of `dir` at `path` (which exists and is empty). */
function materialize(dir: Dir, path: string): void {
	for (const [name, e] of dir.durable) {
		const p = join(path, name);
		if (e.kind === "dir") {
			mkdirSync(p);
			materialize(e.dir, p);
			chmodSync(p, e.dir.mode);
		} else {
			writeFileSync(p, e.ino.durable);
			chmodSync(p, e.ino.mode);
		}
	}
}

const decode = (hex: string) => Buffer.from(hex.replaceAll("\\x", ""), "hex");
/** A trace line with its hex strings decoded, for a failure's message. */
const shown = (raw: string) =>
	raw
		.replace(/(?:\\x[0-9a-f]{2})+/g, (h) => JSON.stringify(decode(h).toString("latin1")).slice(1, -1))
		.slice(0, 200);

/** A trace line's call: name, string arguments, descriptor arguments, return value and its path. */
interface Call {
	name: string;
	strings: Buffer[];
	fds: Array<{ fd: number; path: string }>;
	ret: number;
	retPath?: string;
	raw: string;
}

function parseCalls(trace: string): Array<Call | "begin" | "end"> {
	const pending = new Map<string, string>();
	const out: Array<Call | "begin" | "end"> = [];
	for (let line of trace.split("\n")) {
		const pid = /^(\d+)\s+/.exec(line)?.[1];
		if (!pid) continue;
		line = line.slice(line.indexOf(" ")).trim();
		if (line.endsWith("<unfinished ...>")) {
			pending.set(pid, line.slice(0, -"<unfinished ...>".length));
			continue;
		}
		const resumed = /^<\.\.\. [a-z0-9_]+ resumed>/.exec(line);
		if (resumed) line = (pending.get(pid) ?? "") + line.slice(resumed[0].length);
		const m = /^([a-z0-9_]+)\((.*)\)\s+=\s+(-?\d+)(?:<((?:\\x[0-9a-f]{2})*)>)?/.exec(line);
		if (!m) continue;
		const args = m[2];
		const text = decode(args.match(/"((?:\\x[0-9a-f]{2})*)"/)?.[1] ?? "").toString("latin1");
		if (MARKERS.includes(m[1])) {
			if (text === "/keel-fault-begin") out.push("begin");
			if (text === "/keel-fault-end") out.push("end");
			continue;
		}
		if (!FILE_SYSCALLS.includes(m[1]) && m[1] !== "close") continue;
		out.push({
			name: m[1],
			strings: [...args.matchAll(/"((?:\\x[0-9a-f]{2})*)"/g)].map((s) => decode(s[1])),
			fds: [...args.matchAll(/(\d+)<((?:\\x[0-9a-f]{2})*)>/g)].map((f) => ({
				fd: Number(f[1]),
				path: decode(f[2]).toString("latin1"),
			})),
			ret: Number(m[3]),
			retPath: m[4] === undefined ? undefined : decode(m[4]).toString("latin1"),
			raw: line,
		});
	}
	return out;
}

/** The model of one run directory, driven by the calls of its trace. */
class Model {
	/** What each open descriptor stands for (its file's inode, or a directory). */
	private readonly fds = new Map<number, Entry>();
	private readonly fdPaths = new Map<number, string>();

	constructor(
		readonly base: string,
		readonly top: Dir,
		/** The descriptors the traced process held before the trace began (its pinned roots). */
		opened: Map<number, string>,
	) {
		for (const [fd, path] of opened) {
			this.fdPaths.set(fd, path);
			const e = this.lookup(this.resolve(path) ?? (path === base ? base : undefined));
			if (e) this.fds.set(fd, e);
		}
	}

	private resolve(p: string): string | undefined {
		const proc = /^\/proc\/self\/fd\/(\d+)(\/.*)?$/.exec(p);
		const abs = proc ? `${this.fdPaths.get(Number(proc[1])) ?? "/nonexistent"}${proc[2] ?? ""}` : p;
		if (abs !== this.base && !abs.startsWith(`${this.base}/`)) return undefined;
		return posix.normalize(abs);
	}

	/** The directory holding `path`, and the name in it. */
	private parent(path: string): { dir: Dir; name: string } | undefined {
		const parts = path.slice(this.base.length + 1).split("/");
		let dir = this.top;
		for (const part of parts.slice(0, -1)) {
			const e = dir.entries.get(part);
			if (e?.kind !== "dir") return undefined;
			dir = e.dir;
		}
		return { dir, name: parts[parts.length - 1] };
	}

	private lookup(path: string | undefined): Entry | undefined {
		if (!path) return undefined;
		if (path === this.base) return { kind: "dir", dir: this.top };
		const at = this.parent(path);
		return at?.dir.entries.get(at.name);
	}

	apply(c: Call): void {
		for (const f of c.fds) this.fdPaths.set(f.fd, f.path);
		if (c.ret < 0) return;
		const path = (i: number) => (c.strings[i] ? this.resolve(c.strings[i].toString("latin1")) : undefined);
		switch (c.name) {
			case "openat": {
				const p = path(0);
				if (c.retPath !== undefined) this.fdPaths.set(c.ret, c.retPath);
				if (!p) return;
				if (/O_CREAT/.test(c.raw) && !this.lookup(p)) {
					const at = this.parent(p);
					const mode = Number.parseInt(/, (0[0-7]+)\)\s+=/.exec(c.raw)?.[1] ?? "0644", 8) & ~UMASK;
					at?.dir.entries.set(at.name, {
						kind: "file",
						ino: { data: Buffer.alloc(0), durable: Buffer.alloc(0), mode },
					});
				}
				const e = this.lookup(p);
				if (e) this.fds.set(c.ret, e);
				return;
			}
			case "write":
			case "pwrite64": {
				const e = this.fds.get(c.fds[0]?.fd ?? -1);
				if (e?.kind !== "file") return;
				const data = c.strings[0].subarray(0, c.ret);
				const off =
					c.name === "pwrite64"
						? Number(/,\s*(\d+)\)\s*=/.exec(c.raw)?.[1] ?? e.ino.data.length)
						: e.ino.data.length;
				const next = Buffer.alloc(Math.max(e.ino.data.length, off + data.length));
				e.ino.data.copy(next);
				data.copy(next, off);
				e.ino.data = next;
				return;
			}
			case "fsync":
			case "fdatasync": {
				const e = this.fds.get(c.fds[0]?.fd ?? -1) ?? this.lookup(this.resolve(c.fds[0]?.path ?? ""));
				if (e?.kind === "file") e.ino.durable = Buffer.from(e.ino.data);
				else if (e?.kind === "dir") e.dir.durable = new Map(e.dir.entries);
				return;
			}
			case "fchmod": {
				const e = this.fds.get(c.fds[0]?.fd ?? -1);
				const mode = Number.parseInt(/,\s*(0[0-7]+)\)/.exec(c.raw)?.[1] ?? "", 8);
				if (e?.kind === "file" && Number.isFinite(mode)) e.ino.mode = mode;
				return;
			}
			case "close":
				this.fds.delete(c.fds[0]?.fd ?? -1);
				return;
			case "mkdir":
			case "mkdirat": {
				const p = path(0);
				const at = p ? this.parent(p) : undefined;
				const mode = Number.parseInt(/,\s*(0[0-7]+)\)\s*=/.exec(c.raw)?.[1] ?? "0777", 8) & ~UMASK;
				at?.dir.entries.set(at.name, { kind: "dir", dir: { entries: new Map(), durable: new Map(), mode } });
				return;
			}
			case "rename":
			case "renameat":
			case "renameat2":
			case "link":
			case "linkat": {
				const from = path(0);
				const to = path(1);
				const src = from ? this.parent(from) : undefined;
				const dst = to ? this.parent(to) : undefined;
				const e = src?.dir.entries.get(src.name);
				if (!src || !dst || !e) return;
				// RENAME_EXCHANGE (the replace's swap) trades the two entries; a rename moves one.
				const other = c.raw.includes("RENAME_EXCHANGE") ? dst.dir.entries.get(dst.name) : undefined;
				dst.dir.entries.set(dst.name, e);
				if (other) src.dir.entries.set(src.name, other);
				else if (c.name.startsWith("rename")) src.dir.entries.delete(src.name);
				return;
			}
			case "unlink":
			case "unlinkat":
			case "rmdir": {
				const p = path(0);
				const at = p ? this.parent(p) : undefined;
				at?.dir.entries.delete(at.name);
				return;
			}
		}
	}
}

let lab: Lab | undefined;

beforeAll(async () => {
	lab = await Lab.create();
}, 120_000);

afterAll(async () => {
	await lab?.close();
});

describe("power loss at every call of a commit, keeping only what was fsynced", () => {
	for (const op of OPS) {
		it(`${op}: every state the model keeps recovers to all-old or all-new`, async (ctx) => {
			if (!lab) return ctx.skip();
			const ready = await prepare(lab, op);
			const base = join(ready.root, "..");
			const opened = new Map<number, string>();
			for (const fd of readdirSync(`/proc/${ready.child.pid}/fd`)) {
				try {
					opened.set(Number(fd), readlinkSync(`/proc/${ready.child.pid}/fd/${fd}`));
				} catch {}
			}
			const model = new Model(base, load(base), opened);
			const traceFile = join(base, "..", `${op}-power.trace`);
			const run = await runOp(ready, [
				"-y",
				"-xx",
				"-s",
				"1048576",
				"-o",
				traceFile,
				"-e",
				`trace=${[...FILE_SYSCALLS, "close", ...MARKERS].join(",")}`,
			]);
			if (!run.answer?.ok) {
				if (/attach|ptrace|Operation not permitted/.test(run.stderr)) return ctx.skip();
				throw new Error(`traced run failed: ${run.exit} ${run.stderr}`);
			}
			expect(classify(tree(run.root).files, op)).toBe("new");
			const calls = parseCalls(readFileSync(traceFile, "utf8"));
			const failures: string[] = [];
			let inside = false;
			let points = 0;
			let sawNew = false;
			let last = "";
			for (const c of calls) {
				if (c === "begin" || c === "end") {
					inside = c === "begin";
					continue;
				}
				model.apply(c);
				// Only an fsync changes what the model keeps: the states between two are the same.
				if (!inside || !c.name.includes("sync") || c.ret < 0) continue;
				points++;
				for (const name of readdirSync(base)) rmSync(join(base, name), { recursive: true, force: true });
				materialize(model.top, base);
				// KEEL_POWER_DEBUG=1 names what the state directory kept, for a failure's message.
				const kept = process.env.KEEL_POWER_DEBUG
					? JSON.stringify(lstatSync(run.state, { throwIfNoEntry: false }) && tree(run.state))
					: "";
				const s = await Session.create({ root: run.root, stateDir: run.state, profile: "unified" });
				await s.close();
				const after = tree(run.root);
				const state = classify(after.files, op);
				if (state === "new") sawNew = true;
				last = `${state} ${JSON.stringify(after.files)}`;
				if (state === "mixed")
					failures.push(`after ${shown(c.raw)}: a mix: ${JSON.stringify(after.files)} ${kept}`);
				if (after.temps.length) failures.push(`after ${shown(c.raw)}: temp files ${after.temps.join(", ")}`);
			}
			expect(failures, failures.join("\n")).toEqual([]);
			// The model did replay the commit: its last state is the new one.
			expect(points).toBeGreaterThan(2);
			expect(sawNew, `the last state kept: ${last}`).toBe(true);
		}, 120_000);
	}
});
