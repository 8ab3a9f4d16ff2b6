/**
 * One scan of the workspace for checkpoints: every entry under each root, its state, and the
 * bytes of each file that changed since the previous scan, put into the blob store.
 *
 * The walk never follows a link and never leaves the roots, even while another process swaps a
 * directory for a link: each directory is opened with O_NOFOLLOW | O_DIRECTORY from its parent's
 * open descriptor (`/proc/self/fd/N/name`, resolved by the kernel from the open directory, not by
 * name), listed through that descriptor, and each file is opened the same way with O_NOFOLLOW and
 * O_NONBLOCK (a FIFO swapped in never blocks) and kept only when the opened object is the one the
 * lstat saw. A symlink is recorded as its target text.
 *
 * A file whose stat identity (device, inode, size, mtime, ctime, mode) is what the previous scan
 * recorded is not read again. File times tick coarsely, so a file changed within RACY_NS of a scan
 * could change again without its identity changing: such entries are read again on the next scan
 * (git's "racily clean" rule).
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync } from "node:fs";
import type { BlobStore } from "./blob-store.js";
import { readBounded, sha256Of } from "./blob-store.js";
import { IgnoreRules } from "./ignore-rules.js";
import type { CheckpointBudgets, PathState, ScannedEntry, TreeIndex } from "./types.js";

const RACY_NS = 50_000_000n;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const GITIGNORE_MAX = 1024 * 1024;

export interface ScanResult {
	index: TreeIndex;
	/** Paths left out by rule (ignored directories and files), capped. */
	leftOut: string[];
	leftOutCount: number;
	/** Files kept by identity only: over the per-file budget or the checkpoint's byte budget. */
	identityOnly: string[];
	/** The walk stopped at the entry budget. */
	truncated: boolean;
}

export interface ScanInput {
	roots: readonly string[];
	previous: TreeIndex | undefined;
	store: BlobStore;
	budgets: CheckpointBudgets;
	/** Bytes this scan may still add to the store. */
	room: number;
}

const LEFT_OUT_SHOWN = 50;

export function scanTree(input: ScanInput): ScanResult {
	const result: ScanResult = {
		index: new Map(),
		leftOut: [],
		leftOutCount: 0,
		identityOnly: [],
		truncated: false,
	};
	let room = input.room;
	const scanStart = BigInt(Date.now()) * 1_000_000n;
	const leaveOut = (path: string) => {
		result.leftOutCount++;
		if (result.leftOut.length < LEFT_OUT_SHOWN) result.leftOut.push(path);
	};

	const fileState = (at: string, path: string, st: ReturnType<typeof statOf>): ScannedEntry | undefined => {
		const identity = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}`;
		const racy = st.mtimeNs >= scanStart - RACY_NS || st.ctimeNs >= scanStart - RACY_NS;
		const mode = Number(st.mode & 0o7777n);
		const prev = input.previous?.get(path);
		if (prev && !prev.racy && prev.identity === identity) return { ...prev, racy };
		const size = Number(st.size);
		if (size > input.budgets.maxFileBytes) {
			result.identityOnly.push(path);
			return { state: { kind: "file", mode, size, sha256: null }, identity, racy };
		}
		let fd: number;
		try {
			fd = openSync(at, FILE_FLAGS);
		} catch {
			return undefined; // Gone or swapped since the listing: the next scan sees what is there.
		}
		try {
			const opened = fstatSync(fd, { bigint: true });
			if (!opened.isFile() || opened.ino !== st.ino || opened.dev !== st.dev) return undefined;
			const bytes = readBounded(fd, input.budgets.maxFileBytes);
			if (!bytes) {
				result.identityOnly.push(path);
				return { state: { kind: "file", mode, size, sha256: null }, identity, racy: true };
			}
			const sha = sha256Of(bytes);
			if (!input.store.put(sha, bytes, room)) {
				result.identityOnly.push(path);
				return { state: { kind: "file", mode, size: bytes.length, sha256: null }, identity, racy: true };
			}
			room -= bytes.length;
			const after = fstatSync(fd, { bigint: true });
			const moved = after.mtimeNs !== st.mtimeNs || after.ctimeNs !== st.ctimeNs || after.size !== st.size;
			return {
				state: { kind: "file", mode, size: bytes.length, sha256: sha },
				identity,
				racy: racy || moved,
			};
		} finally {
			closeSync(fd);
		}
	};

	const walk = (dirFd: number, dirPath: string, rules: IgnoreRules, rel: string) => {
		const here = `/proc/self/fd/${dirFd}`;
		let names: string[];
		try {
			names = readdirSync(here);
		} catch {
			return;
		}
		const relOf = (name: string) => (rel === "" ? name : `${rel}/${name}`);
		const own = names.includes(".gitignore") ? readGitignore(`${here}/.gitignore`) : undefined;
		const inForce = rules.child(rel, own);
		for (const name of names) {
			if (result.index.size >= input.budgets.maxEntries) {
				result.truncated = true;
				return;
			}
			const at = `${here}/${name}`;
			const path = `${dirPath}/${name}`;
			let st: ReturnType<typeof statOf>;
			try {
				st = statOf(at);
			} catch {
				continue;
			}
			const kind = st.mode & BigInt(constants.S_IFMT);
			const isDir = kind === BigInt(constants.S_IFDIR);
			if (inForce.leavesOut(relOf(name), name, isDir)) {
				leaveOut(path);
				continue;
			}
			if (isDir) {
				let fd: number;
				try {
					fd = openSync(at, DIR_FLAGS);
				} catch {
					continue;
				}
				try {
					const opened = fstatSync(fd, { bigint: true });
					if (opened.ino !== st.ino || opened.dev !== st.dev) continue;
					result.index.set(path, {
						state: { kind: "dir", mode: Number(st.mode & 0o7777n) },
						identity: "",
						racy: false,
					});
					walk(fd, path, inForce, relOf(name));
				} finally {
					closeSync(fd);
				}
			} else if (kind === BigInt(constants.S_IFLNK)) {
				try {
					const state: PathState = { kind: "link", target: readlinkSync(at) };
					result.index.set(path, { state, identity: "", racy: false });
				} catch {
					// Gone since the listing.
				}
			} else if (kind === BigInt(constants.S_IFREG)) {
				const entry = fileState(at, path, st);
				if (entry) result.index.set(path, entry);
			} else {
				result.index.set(path, { state: { kind: "other" }, identity: "", racy: false });
			}
		}
	};

	for (const root of input.roots) {
		let fd: number;
		try {
			fd = openSync(root, DIR_FLAGS);
		} catch {
			continue;
		}
		try {
			walk(fd, root, IgnoreRules.empty(), "");
		} finally {
			closeSync(fd);
		}
	}
	return result;
}

function statOf(at: string) {
	return lstatSync(at, { bigint: true });
}

function readGitignore(at: string): string | undefined {
	let fd: number;
	try {
		fd = openSync(at, FILE_FLAGS);
	} catch {
		return undefined;
	}
	try {
		if (!fstatSync(fd).isFile()) return undefined;
		return readBounded(fd, GITIGNORE_MAX)?.toString("utf8");
	} finally {
		closeSync(fd);
	}
}
