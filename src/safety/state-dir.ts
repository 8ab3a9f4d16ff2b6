/**
 * keel's state directory: where the intent journal (and whatever else keel reads back across
 * sessions) lives. What keel reads back from here drives writes at the next session's start, so
 * it must be a place that neither the model's tools, nor sandboxed code, nor another user can
 * write:
 *   - it lies outside every root (read-write or read-only) of the session; a requested or
 *     default directory inside one is replaced by a fallback outside, named in one stderr line,
 *     and refused when the fallback is inside a root too;
 *   - it and every directory below it that keel uses is a real directory (not a link) owned by
 *     this user with no group or other write bit, and every ancestor is owned by this user or
 *     root and not writable by others (unless sticky, like /tmp);
 *   - a per-user key (32 random bytes in `record-key`, 0600, created O_EXCL) authenticates the
 *     records; it is read only through a descriptor opened without following a link and checked
 *     (regular file, this user's, mode 0600, one link, 32 bytes).
 * Every directory keel creates here is fsynced into its parent before anything is put in it.
 * A subdirectory that fails the checks (e.g. later replaced by a link) is set aside under a
 * `quarantined-` name and made again: a hostile entry never stops a session.
 */
import { randomBytes } from "node:crypto";
import {
	closeSync,
	constants,
	fstatSync,
	fsyncSync,
	lstatSync,
	mkdirSync,
	openSync,
	readSync,
	realpathSync,
	renameSync,
	writeSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { KeelError } from "../boundary/errors.js";
import { isWithin } from "./canonical-paths.js";

export const KEY_FILE = "record-key";
const KEY_BYTES = 32;
export const QUARANTINE_PREFIX = "quarantined-";

/** The requested state directory, else ${XDG_STATE_HOME:-~/.local/state}/keel. */
export function defaultStateDir(): string {
	const base = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
	return join(base, "keel");
}

/** Where keel goes when the requested directory is inside a root: persistent across reboots. */
function fallbackStateDir(): string {
	return `/var/tmp/keel-state-${process.geteuid?.() ?? "user"}`;
}

const uid = () => process.geteuid?.() ?? -1;

/** Why `path` (lstat'ed) is not a private directory of this user, or undefined when it is. */
function notPrivate(path: string): string | undefined {
	const st = lstatSync(path, { throwIfNoEntry: false });
	if (!st) return "missing";
	if (st.isSymbolicLink()) return "a symbolic link";
	if (!st.isDirectory()) return "not a directory";
	if (uid() >= 0 && st.uid !== uid()) return `owned by uid ${st.uid}`;
	if (st.mode & 0o022) return `writable by others (mode ${(st.mode & 0o777).toString(8)})`;
	return undefined;
}

/** Why an ancestor of the state directory lets someone else swap it, or undefined. */
function unsafeAncestor(dir: string): string | undefined {
	for (let d = dirname(dir); ; d = dirname(d)) {
		const st = lstatSync(d, { throwIfNoEntry: false });
		if (st) {
			if (st.isSymbolicLink()) {
				// A link among the ancestors is fine when root or this user made it (e.g. /var/tmp on some systems).
				if (st.uid !== 0 && st.uid !== uid()) return `${d} is a link owned by uid ${st.uid}`;
			} else {
				if (st.uid !== 0 && st.uid !== uid()) return `${d} is owned by uid ${st.uid}`;
				if (st.mode & 0o022 && !(st.mode & 0o1000)) return `${d} is writable by others`;
			}
		}
		if (d === "/") return undefined;
	}
}

function fsyncDirSync(path: string): void {
	const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
	try {
		fsyncSync(fd);
	} finally {
		closeSync(fd);
	}
}

/** mkdir -p with mode 0700, each new directory fsynced into its parent. */
function makeDurable(dir: string): void {
	const missing: string[] = [];
	for (let d = dir; !lstatSync(d, { throwIfNoEntry: false }); d = dirname(d)) missing.unshift(d);
	for (const d of missing) {
		try {
			mkdirSync(d, 0o700);
		} catch (e) {
			if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
		}
		fsyncDirSync(dirname(d));
	}
}

/**
 * `dir` (a subdirectory of a checked state directory) as a private directory: made (durably) when
 * missing, set aside and made again when it is anything else. Returns what was set aside.
 */
export function ensurePrivateDir(dir: string): string | undefined {
	const why = notPrivate(dir);
	if (why === undefined) return undefined;
	if (why === "missing") {
		makeDurable(dir);
		return undefined;
	}
	const aside = join(dirname(dir), `${QUARANTINE_PREFIX}${randomBytes(4).toString("hex")}`);
	renameSync(dir, aside);
	makeDurable(dir);
	return `${dir} was ${why}; set aside as ${aside}`;
}

/** Set `entry` aside under a quarantine name in its own directory; returns the new path. */
export function quarantine(entry: string): string {
	const aside = join(dirname(entry), `${QUARANTINE_PREFIX}${randomBytes(4).toString("hex")}`);
	renameSync(entry, aside);
	return aside;
}

function readKey(path: string): Buffer | undefined {
	let fd: number;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
		throw e;
	}
	try {
		const st = fstatSync(fd);
		if (
			!st.isFile() ||
			(uid() >= 0 && st.uid !== uid()) ||
			(st.mode & 0o777) !== 0o600 ||
			st.nlink !== 1 ||
			st.size !== KEY_BYTES
		)
			throw new Error("not keel's key");
		const key = Buffer.alloc(KEY_BYTES);
		if (readSync(fd, key, 0, KEY_BYTES, 0) !== KEY_BYTES) throw new Error("short key");
		return key;
	} finally {
		closeSync(fd);
	}
}

function makeKey(dir: string): Buffer | undefined {
	const key = randomBytes(KEY_BYTES);
	let fd: number;
	try {
		fd = openSync(
			join(dir, KEY_FILE),
			constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
			0o600,
		);
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === "EEXIST") return undefined; // another session made it first
		throw e;
	}
	try {
		writeSync(fd, key);
		fsyncSync(fd);
	} finally {
		closeSync(fd);
	}
	fsyncDirSync(dir);
	return key;
}

function stateError(dir: string, why: string): KeelError {
	return new KeelError(
		"PERMISSION_DENIED",
		`keel's state directory ${dir} cannot be used: ${why}. Pass a stateDir that only this user can write, outside every root.`,
		{ path: dir },
	);
}

/**
 * A session's state directory. Where it is is decided when the session starts (a path question);
 * it is made, checked and its key read on first use, so a session that never writes a record or
 * finds none never touches it.
 */
export class StateDir {
	private key: Buffer | undefined;

	private constructor(
		readonly dir: string,
		/** What was moved or set aside while choosing and opening it, one line each. */
		readonly notes: string[],
	) {
		for (const line of notes) process.stderr.write(`${line}\n`);
	}

	/** Say on stderr, in one line, what was moved or set aside. */
	note(line: string): void {
		this.notes.push(line);
		process.stderr.write(`${line}\n`);
	}

	/**
	 * Choose the state directory for a session whose roots (read-write and read-only, canonical)
	 * are `reach`. `requested` is the caller's choice (default: defaultStateDir()).
	 */
	static choose(requested: string | undefined, reach: readonly string[]): StateDir {
		const inside = (d: string) => reach.find((r) => isWithin(r, d) || isWithin(d, r));
		const wanted = resolve(requested ?? defaultStateDir());
		const root = inside(canonicalish(wanted));
		if (!root) return new StateDir(wanted, []);
		const fallback = fallbackStateDir();
		if (inside(canonicalish(fallback)))
			throw stateError(
				wanted,
				`it is inside the root ${root}, where the tools could rewrite it (and so is ${fallback})`,
			);
		return new StateDir(fallback, [
			`keel: the state directory ${wanted} is inside the root ${root}; using ${fallback} instead`,
		]);
	}

	/** The directory made and checked, and the key that authenticates records written here. */
	recordKey(): Buffer {
		if (this.key) return this.key;
		const ancestor = unsafeAncestor(this.dir);
		if (ancestor) throw stateError(this.dir, ancestor);
		makeDurable(this.dir);
		const why = notPrivate(this.dir);
		if (why) throw stateError(this.dir, why);
		const file = join(this.dir, KEY_FILE);
		let key: Buffer | undefined;
		try {
			key = readKey(file);
		} catch {
			// Not a key keel made (a link, another owner, a wrong mode or size): set it aside.
			this.note(`keel: ${file} was not keel's record key; set aside as ${quarantine(file)}`);
		}
		for (let tries = 0; !key && tries < 3; tries++) key = makeKey(this.dir) ?? readKey(file);
		if (!key) throw stateError(this.dir, "its record key could not be made");
		this.key = key;
		return key;
	}
}

/** The canonical form of `path` as far as it exists (a link among its ancestors is resolved). */
function canonicalish(path: string): string {
	const tail: string[] = [];
	for (let d = path; ; d = dirname(d)) {
		try {
			return join(realpathSync(d), ...tail);
		} catch {
			if (d === "/") return path;
			tail.unshift(d.slice(dirname(d).length + (dirname(d) === "/" ? 0 : 1)));
		}
	}
}
