/**
 * Scans of the workspace for checkpoints: every entry under each root, its state, and the bytes
 * of each file that changed since the previous scan, put into the blob store. A full scan walks
 * everything; a partial one (tree-rescan.ts: tree-watch.ts names the directories that changed)
 * lists only those.
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
 * (git's "racily clean" rule). A directory is kept with its device and inode: one that is another
 * directory now (renamed over, recreated) is walked whole.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync } from "node:fs";
import { type BlobStore, readBounded, sha256Of } from "./blob-store.js";
import { IgnoreRules } from "./ignore-rules.js";
import { TreeIndex } from "./tree-index.js";
import type { CheckpointBudgets, PathState, ScannedEntry } from "./types.js";

const RACY_NS = 50_000_000n;
export const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const GITIGNORE_MAX = 1024 * 1024;
const LEFT_OUT_SHOWN = 50;

export interface ScanResult {
	index: TreeIndex;
	/** Paths left out by rule (ignored directories and files), capped. */
	leftOut: string[];
	leftOutCount: number;
	/** Files kept by identity only: over the per-file budget or the checkpoint's byte budget. */
	identityOnly: string[];
	/** The walk stopped at the entry budget. */
	truncated: boolean;
	/**
	 * A partial scan changes the previous index in place; these are the entries it replaced or
	 * removed, as they were (undefined: the path was not there), for the caller's list of changes.
	 */
	priors?: Map<string, ScannedEntry | undefined>;
}

export interface ScanInput {
	roots: readonly string[];
	previous: TreeIndex | undefined;
	store: BlobStore;
	budgets: CheckpointBudgets;
	/** Bytes this scan may still add to the store. */
	room: number;
	/**
	 * Called with each directory's open descriptor before it is listed (tree-watch.ts adds its
	 * watch there, so a change after the listing is always reported).
	 */
	beforeList?: (fdPath: string, dirPath: string) => void;
}

type Stat = ReturnType<typeof statOf>;

function statOf(at: string) {
	return lstatSync(at, { bigint: true });
}

/** One scan's walk: its results, what it may still store, and how it treats each entry. */
export class Walk {
	readonly result: ScanResult;
	private room: number;
	private readonly scanStart = BigInt(Date.now()) * 1_000_000n;

	constructor(
		private readonly input: ScanInput,
		index: TreeIndex,
		/**
		 * Partial scans change `index` (the previous one) in place, recording what they replace,
		 * and keep the subtrees of directories that are still the same directory.
		 */
		private readonly priors?: Map<string, ScannedEntry | undefined>,
	) {
		this.result = { index, leftOut: [], leftOutCount: 0, identityOnly: [], truncated: false, priors };
		this.room = input.room;
	}

	/** The entry the previous scan had at `path`. */
	private previousOf(path: string): ScannedEntry | undefined {
		if (!this.priors) return this.input.previous?.get(path);
		return this.priors.has(path) ? this.priors.get(path) : this.result.index.get(path);
	}

	private setEntry(path: string, entry: ScannedEntry): void {
		if (this.priors && !this.priors.has(path)) this.priors.set(path, this.result.index.get(path));
		this.result.index.set(path, entry);
	}

	private deleteEntry(path: string): void {
		if (this.priors && !this.priors.has(path)) this.priors.set(path, this.result.index.get(path));
		this.result.index.delete(path);
	}

	private leaveOut(path: string): void {
		this.result.leftOutCount++;
		if (this.result.leftOut.length < LEFT_OUT_SHOWN) this.result.leftOut.push(path);
	}

	private fileEntry(at: string, path: string, st: Stat): ScannedEntry | undefined {
		const { budgets, store } = this.input;
		const identity = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}`;
		const racy = st.mtimeNs >= this.scanStart - RACY_NS || st.ctimeNs >= this.scanStart - RACY_NS;
		const mode = Number(st.mode & 0o7777n);
		const prev = this.previousOf(path);
		if (prev && !prev.racy && prev.identity === identity) return { ...prev, racy };
		const size = Number(st.size);
		const identityOnly = (bytes: number, stillRacy: boolean): ScannedEntry => {
			this.result.identityOnly.push(path);
			return { state: { kind: "file", mode, size: bytes, sha256: null }, identity, racy: stillRacy };
		};
		if (size > budgets.maxFileBytes) return identityOnly(size, racy);
		let fd: number;
		try {
			fd = openSync(at, FILE_FLAGS);
		} catch {
			return undefined; // Gone or swapped since the listing: the next scan sees what is there.
		}
		try {
			const opened = fstatSync(fd, { bigint: true });
			if (!opened.isFile() || opened.ino !== st.ino || opened.dev !== st.dev) return undefined;
			const bytes = readBounded(fd, budgets.maxFileBytes);
			if (!bytes) return identityOnly(size, true);
			const sha = sha256Of(bytes);
			if (!store.put(sha, bytes, this.room)) return identityOnly(bytes.length, true);
			this.room -= bytes.length;
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
	}

	/** Remove everything below `dir` from the index, when the previous scan had a directory there. */
	private forgetBelow(dir: string): void {
		if (!this.priors || this.previousOf(dir)?.state.kind !== "dir") return;
		for (const p of this.result.index.below(dir)) this.deleteEntry(p);
	}

	/** List the open directory `dirFd` (at `dirPath`) and record its entries; `deep` walks below. */
	list(dirFd: number, dirPath: string, rules: IgnoreRules, rel: string): void {
		const here = `/proc/self/fd/${dirFd}`;
		this.input.beforeList?.(here, dirPath);
		let names: string[];
		try {
			names = readdirSync(here);
		} catch {
			return;
		}
		const relOf = (name: string) => (rel === "" ? name : `${rel}/${name}`);
		const own = names.includes(".gitignore") ? readGitignore(`${here}/.gitignore`) : undefined;
		const inForce = rules.child(rel, own);
		const index = this.result.index;
		// A partial scan starts from the previous index: this directory's entries are listed anew.
		const partial = this.priors !== undefined;
		const hadDirs =
			partial && (this.previousOf(dirPath) || this.input.roots.includes(dirPath))
				? this.takeChildren(dirPath)
				: [];
		for (const name of names) {
			if (index.size >= this.input.budgets.maxEntries) {
				this.result.truncated = true;
				break;
			}
			const at = `${here}/${name}`;
			const path = `${dirPath}/${name}`;
			let st: Stat;
			try {
				st = statOf(at);
			} catch {
				continue;
			}
			const kind = st.mode & BigInt(constants.S_IFMT);
			const isDir = kind === BigInt(constants.S_IFDIR);
			if (inForce.leavesOut(relOf(name), name, isDir)) {
				if (partial) this.forgetBelow(path);
				this.leaveOut(path);
				continue;
			}
			if (isDir) {
				const identity = `${st.dev}:${st.ino}`;
				const mode = Number(st.mode & 0o7777n);
				const was = partial ? this.previousOf(path) : undefined;
				if (was && was.identity === identity) {
					// The same directory: its own watch reports what changes below it.
					this.setEntry(path, { state: { kind: "dir", mode }, identity, racy: false });
					continue;
				}
				if (partial) this.forgetBelow(path);
				let fd: number;
				try {
					fd = openSync(at, DIR_FLAGS);
				} catch {
					continue;
				}
				try {
					const opened = fstatSync(fd, { bigint: true });
					if (opened.ino !== st.ino || opened.dev !== st.dev) continue;
					this.setEntry(path, { state: { kind: "dir", mode }, identity, racy: false });
					this.list(fd, path, inForce, relOf(name));
				} finally {
					closeSync(fd);
				}
				continue;
			}
			if (partial) this.forgetBelow(path);
			if (kind === BigInt(constants.S_IFLNK)) {
				try {
					const state: PathState = { kind: "link", target: readlinkSync(at) };
					this.setEntry(path, { state, identity: "", racy: false });
				} catch {
					// Gone since the listing.
				}
			} else if (kind === BigInt(constants.S_IFREG)) {
				const entry = this.fileEntry(at, path, st);
				if (entry) this.setEntry(path, entry);
			} else {
				this.setEntry(path, { state: { kind: "other" }, identity: "", racy: false });
			}
		}
		// A directory that is gone takes everything that was below it.
		for (const dir of hadDirs) if (!index.has(dir)) this.forgetBelow(dir);
	}

	/** Remove `dir`'s direct entries from the index; returns those that were directories. */
	private takeChildren(dir: string): string[] {
		const dirs: string[] = [];
		for (const p of this.result.index.childrenOf(dir)) {
			if (this.result.index.get(p)?.state.kind === "dir") dirs.push(p);
			this.deleteEntry(p);
		}
		return dirs;
	}
}

/** A full scan of every root. */
export function scanTree(input: ScanInput): ScanResult {
	const walk = new Walk(input, new TreeIndex());
	for (const root of input.roots) {
		let fd: number;
		try {
			fd = openSync(root, DIR_FLAGS);
		} catch {
			continue;
		}
		try {
			walk.list(fd, root, IgnoreRules.empty(), "");
		} finally {
			closeSync(fd);
		}
	}
	return walk.result;
}

export function readGitignore(at: string): string | undefined {
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
