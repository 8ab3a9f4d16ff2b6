/**
 * grep's lookahead on this machine (rg-plan.ts): while rg starts (milliseconds it spends loading,
 * on one core), this process reads the first files in path order with the JS engine's rules
 * (ignore files, the glob, binary files, no links followed) and says whether more than `limit`
 * matches come before rg's walk begins. A guess at which rg run answers sooner, never an answer:
 * the matches always come from rg, so a wrong guess costs time, not correctness.
 *
 * The files are read synchronously, in steps bounded in time (between steps the event loop turns
 * and the plan may give the guess up): in this process a thread-pool hop per file costs more
 * than the read. The plan (rg-parallel.ts) takes a first short step before it starts any rg.
 */
import { closeSync, constants, type Dirent, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import { onlyLocalFs } from "../mount-table.js";
import type { GrepRequest } from "../types.js";
import {
	compileOverride,
	isIgnored,
	joinPath,
	type Level,
	loadAncestorsSync,
	loadLevelSync,
	type Override,
} from "./ignore-rules.js";
import { loadRe2, type Re2 } from "./patterns.js";
import { comparePaths } from "./semantics.js";

/**
 * Whether more than `req.limit` matches lie in the first files in path order: "dense" if so,
 * "sparse" if not (or no guess can be made), "more" when `step` reached its deadline first.
 */
export type Verdict = "dense" | "sparse" | "more";

/** A guess under way: each `step` reads on until a verdict or `deadline` (performance.now()). */
export interface LookaheadScan {
	step(deadline: number): Verdict;
	close(): void;
}

/** A scan of the first files for `req`; undefined when no guess can be made. */
export type Lookahead = (req: GrepRequest) => LookaheadScan | undefined;

/**
 * How far a lookahead reads: files (about what this process reads while rg starts, wherever
 * both scale with the cost of a system call), bytes of each (a guess needs no more), and time.
 */
const MAX_FILES = 512;
/** A directory's size (bytes, as stat gives it) past which it is not listed: 10,000s of entries. */
const MAX_DIR_BYTES = 1024 * 1024;
/** Files read before the rate of matches so far may end the lookahead early. */
const SAMPLE_FILES = 16;
const HEAD_BYTES = 64 * 1024;
const MAX_MS = 50;
/** How long after its first grep a process loads re2js for the lookahead. */
const LOAD_LATER_MS = 1000;
/** Rust regex syntax that is a literal: plain characters and escaped ASCII punctuation. */
const LITERAL_REGEX = /^(?:[^.^$*+?()[\]{}|\\]|\\[!-/:-@[-`{-~])+$/;

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The pattern's bytes when it is a literal (`literal: true`, or regex syntax that only spells
 * one, as `foo\(`), which a lookahead finds with indexOf; anything else gets no lookahead: re2js
 * tests a line far slower than rg starts.
 */
function literalOf(req: GrepRequest): Buffer | undefined {
	if (req.ignoreCase || req.pattern === "" || req.pattern.includes("\n")) return undefined;
	if (req.literal) return Buffer.from(req.pattern);
	if (!LITERAL_REGEX.test(req.pattern)) return undefined;
	return Buffer.from(req.pattern.replace(/\\(.)/g, "$1"));
}

/**
 * A lookahead with its own read buffer and re2 (for ignore files and globs): `preloaded`, or
 * loaded a second after the first call, which goes without a guess.
 */
export function createLookahead(preloaded?: Promise<Re2>): Lookahead {
	let re2: Re2 | undefined;
	let loadScheduled = false;
	const load = (from: Promise<Re2>) =>
		from.then(
			(r) => {
				re2 = r;
			},
			() => undefined,
		);
	if (preloaded) {
		loadScheduled = true;
		load(preloaded);
	}
	const head = Buffer.alloc(HEAD_BYTES);
	return (req) => {
		if (req.pinned !== undefined && req.pinnedDir !== true) return undefined; // one file: nothing to guess
		if (!re2) {
			// re2js (ignore files, globs) takes ~25 ms to load here: never during a grep. It is loaded
			// a second later, in a process that lives that long (a session, not a one-shot call).
			if (!loadScheduled) setTimeout(() => load(loadRe2()), LOAD_LATER_MS).unref();
			loadScheduled = true;
			return undefined;
		}
		const needle = literalOf(req);
		if (!needle) return undefined;
		let override: Override | undefined;
		try {
			override = req.glob ? compileOverride(req.glob, re2) : undefined;
		} catch {
			return undefined; // rg judges the glob
		}
		return new Scan(req, needle, override, re2, head);
	};
}

interface Dir {
	fd: number;
	abs: string;
	rel: string;
	level: Level;
	entries: Dirent[];
	i: number;
}

class Scan implements LookaheadScan {
	private readonly stack: Dir[] = [];
	private readonly deadline = performance.now() + MAX_MS;
	private files = 0;
	private found = 0;
	private started = false;
	private listFailed = false;
	private verdict: Verdict = "more";

	constructor(
		private readonly req: GrepRequest,
		private readonly needle: Buffer,
		private readonly override: Override | undefined,
		private readonly re2: Re2,
		private readonly head: Buffer,
	) {}

	step(deadline: number): Verdict {
		if (this.verdict === "more") {
			try {
				this.verdict = this.read(deadline);
			} catch {
				this.verdict = "sparse"; // an ignore file too large to parse here (IgnoreTooLarge): no guess
			}
			if (this.verdict !== "more") this.close();
		}
		return this.verdict;
	}

	private start(): boolean {
		// The event loop waits on every read here (the ignore files above the path too): none may
		// reach a filesystem that can stall.
		if (!onlyLocalFs(this.req.path)) return false;
		const top = loadAncestorsSync(this.req.path, ".rgignore", this.re2);
		// The start is the checked directory, or its pinned handle (itself a link): followed.
		const start = this.list(this.req.pinned ?? this.req.path, true);
		if (!start) return false;
		this.stack.push({ ...start, abs: this.req.path, rel: "", level: top, i: 0 });
		return true;
	}

	private read(deadline: number): Verdict {
		if (!this.started) {
			this.started = true;
			if (!this.start()) return "sparse";
		}
		while (this.stack.length > 0) {
			if (this.gaveUp()) return "sparse";
			if (performance.now() > deadline) return "more";
			const dir = this.stack[this.stack.length - 1];
			const entry = dir.entries[dir.i++];
			if (!entry) {
				closeSync(dir.fd);
				this.stack.pop();
				continue;
			}
			const abs = joinPath(dir.abs, entry.name);
			const rel = dir.rel ? `${dir.rel}/${entry.name}` : entry.name;
			const isDir = entry.isDirectory();
			if (entry.name === ".git" || !(isDir || entry.isFile())) continue; // links never followed
			const verdict = this.override?.(rel, isDir);
			if (verdict === "ignore") continue;
			if (verdict === undefined && isIgnored(dir.level, abs, isDir)) continue;
			const at = `/proc/self/fd/${dir.fd}/${entry.name}`;
			if (isDir) {
				const listed = this.list(at, false);
				if (!listed) continue;
				const names = new Set(listed.entries.map((e) => e.name));
				let level: Level;
				try {
					level = loadLevelSync(abs, dir.level, ".rgignore", this.re2, names);
				} catch (e) {
					closeSync(listed.fd);
					throw e;
				}
				this.stack.push({ ...listed, abs, rel, level, i: 0 });
				continue;
			}
			this.found += this.matches(at);
			if (this.found > this.req.limit) return "dense";
			this.files++;
			// At this rate the limit lies past MAX_FILES: the guess is no, and reading on would only
			// take a core from rg's walk.
			if (this.files >= SAMPLE_FILES && this.files * (this.req.limit + 1) > this.found * MAX_FILES)
				return "sparse";
		}
		return "sparse";
	}

	close(): void {
		for (const d of this.stack.splice(0)) closeSync(d.fd);
	}

	private gaveUp(): boolean {
		return this.listFailed || this.files >= MAX_FILES || performance.now() > this.deadline;
	}

	/** A directory opened (not through a link, unless `follow`) and its entries in path order. */
	private list(at: string, follow: boolean): { fd: number; entries: Dirent[] } | undefined {
		let fd: number;
		try {
			fd = openSync(at, follow ? DIR_FLAGS & ~constants.O_NOFOLLOW : DIR_FLAGS);
		} catch {
			return undefined; // unreadable, or swapped for a link: skipped
		}
		try {
			// A directory this large would hold the event loop while listed: no guess.
			if (fstatSync(fd).size > MAX_DIR_BYTES) throw new Error("too large to list here");
			const entries = readdirSync(`/proc/self/fd/${fd}`, { withFileTypes: true });
			return { fd, entries: entries.sort((a, b) => comparePaths(a.name, b.name)) };
		} catch {
			closeSync(fd);
			this.listFailed = true;
			return undefined;
		}
	}

	/** Matching lines in the file's head (a FIFO or device swapped in is never read). */
	private matches(at: string): number {
		let fd: number;
		try {
			fd = openSync(at, FILE_FLAGS);
		} catch {
			return 0;
		}
		try {
			if (!fstatSync(fd).isFile()) return 0;
			const head = this.head.subarray(0, readSync(fd, this.head, 0, this.head.length, 0));
			const max = this.req.limit + 1 - this.found;
			return head.includes(0) ? 0 : linesHolding(head, this.needle, max); // a NUL: binary, skipped
		} catch {
			return 0;
		} finally {
			closeSync(fd);
		}
	}
}

/** How many lines of `text` hold `needle` (none of them a line break), counting up to `max`. */
function linesHolding(text: Buffer, needle: Buffer, max: number): number {
	let n = 0;
	for (let at = text.indexOf(needle); at >= 0 && n < max; ) {
		n++;
		const eol = text.indexOf(10, at + needle.length);
		if (eol < 0) break;
		at = text.indexOf(needle, eol + 1);
	}
	return n;
}
