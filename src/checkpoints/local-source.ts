/**
 * Checkpoints of this machine's files (local and bwrap backends): the tree scanned by
 * tree-scan.ts, the bytes kept in a BlobStore in a private directory of keel's state, and the
 * non-file steps of a restore done through descriptors opened from the root (restore-steps.ts).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, rmdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir, type StateDir } from "../safety/state-dir.js";
import { startTimeOf, writerAlive } from "../safety/writer-alive.js";
import { BlobStore } from "./blob-store.js";
import { chmodNoFollow, inParentDir } from "./restore-steps.js";
import type { CaptureResult, TreeSource } from "./source.js";
import { rescanDirs } from "./tree-rescan.js";
import { type ScanInput, type ScanResult, scanTree } from "./tree-scan.js";
import { TreeWatch } from "./tree-watch.js";
import {
	type CheckpointBudgets,
	type PathChange,
	type ScannedEntry,
	sameState,
	type TreeIndex,
} from "./types.js";

const STORE_PREFIX = "session-";

export class LocalTreeSource implements TreeSource {
	private index: TreeIndex | undefined;
	/** What the last full scan left out (a partial scan lists only the changed directories). */
	private leftOut = { names: [] as string[], count: 0, truncated: false };
	/** Watches on every listed directory, while they cover the whole tree (tree-watch.ts). */
	private watch: TreeWatch | undefined;
	private watchTried = false;

	private constructor(
		readonly roots: readonly string[],
		private readonly store: BlobStore,
		private readonly budgets: CheckpointBudgets,
	) {}

	/**
	 * A store in a new private directory of `state`; directories that sessions of processes no
	 * longer running left there are removed.
	 */
	static open(state: StateDir, roots: readonly string[], budgets: CheckpointBudgets): LocalTreeSource {
		state.recordKey(); // makes and checks the state directory itself
		const base = join(state.dir, "checkpoints");
		const aside = ensurePrivateDir(base);
		if (aside) state.note(`keel: ${aside}`);
		for (const name of readdirSync(base)) {
			const m = /^session-(\d+)-(\d*)-[0-9a-f]+$/.exec(name);
			if (m && !writerAlive(Number(m[1]), m[2])) rmSync(join(base, name), { recursive: true, force: true });
		}
		const dir = join(
			base,
			`${STORE_PREFIX}${process.pid}-${startTimeOf(process.pid)}-${randomBytes(4).toString("hex")}`,
		);
		mkdirSync(dir, 0o700);
		const outer = roots.filter((r, i, all) => !all.some((o, j) => j !== i && r.startsWith(`${o}/`)));
		return new LocalTreeSource(outer, new BlobStore(dir), budgets);
	}

	async capture(room: number): Promise<CaptureResult> {
		const input: ScanInput = {
			roots: this.roots,
			previous: this.index,
			store: this.store,
			budgets: this.budgets,
			room,
		};
		const before = this.index;
		const scan = this.scan(input);
		if (scan !== "unchanged") this.index = scan.index;
		const changes =
			!before || scan === "unchanged"
				? []
				: scan.priors
					? changesFromPriors(scan.priors, scan.index)
					: changesBetween(before, scan.index);
		return {
			changes,
			leftOut: this.leftOut.names,
			leftOutCount: this.leftOut.count,
			identityOnly: scan === "unchanged" ? [] : scan.identityOnly,
			truncated: this.leftOut.truncated,
		};
	}

	/** A partial scan of the directories the watch says changed, else a full one (watched when it can be). */
	private scan(input: ScanInput): ScanResult | "unchanged" {
		if (this.index && this.watch?.usable) {
			const dirty = this.watch.drain();
			if (dirty?.size === 0) return "unchanged";
			const partial = dirty && rescanDirs({ ...input, beforeList: this.watcher() }, dirty);
			if (partial) {
				this.noteLeftOut(partial.leftOut, partial.leftOutCount);
				// A watch that could not be added below: this scan is right, the next ones stat.
				if (!this.watch.usable) this.stopWatching();
				return partial;
			}
		}
		if (!this.watchTried) {
			this.watchTried = true;
			this.watch = TreeWatch.open();
		} else if (this.watch && !this.watch.reset()) this.watch = undefined;
		const full = scanTree({ ...input, beforeList: this.watcher() });
		// Out of watches: stat scans from now on.
		if (this.watch && !this.watch.usable) this.stopWatching();
		this.leftOut = { names: full.leftOut, count: full.leftOutCount, truncated: full.truncated };
		return full;
	}

	/** Add what a partial scan left out to what the last full scan did. */
	private noteLeftOut(names: readonly string[], count: number): void {
		const fresh = names.filter((n) => !this.leftOut.names.includes(n));
		this.leftOut.names = [...this.leftOut.names, ...fresh].slice(0, 50);
		this.leftOut.count += Math.min(fresh.length, count);
	}

	private stopWatching(): void {
		this.watch?.close();
		this.watch = undefined;
	}

	private watcher(): ScanInput["beforeList"] {
		const watch = this.watch;
		return watch && ((fdPath, dirPath) => watch.add(fdPath, dirPath));
	}

	storeBytes(): number {
		return this.store.bytes;
	}

	async blob(sha256: string): Promise<Buffer | null> {
		return this.store.get(sha256);
	}

	async retain(keep: ReadonlySet<string>): Promise<void> {
		const need = new Set(keep);
		for (const e of this.index?.values() ?? [])
			if (e.state.kind === "file" && e.state.sha256) need.add(e.state.sha256);
		this.store.retain(need);
	}

	private rootOf(path: string): string {
		return this.roots.find((r) => path.startsWith(`${r}/`)) ?? this.roots[0];
	}

	async makeDir(path: string, mode: number): Promise<void> {
		inParentDir(this.rootOf(path), path, (at) => mkdirSync(at, mode));
	}

	async makeLink(path: string, target: string): Promise<void> {
		inParentDir(this.rootOf(path), path, (at) => symlinkSync(target, at));
	}

	async setMode(path: string, mode: number): Promise<void> {
		chmodNoFollow(this.rootOf(path), path, mode);
	}

	async removeDir(path: string): Promise<void> {
		inParentDir(this.rootOf(path), path, (at) => rmdirSync(at));
	}

	async close(): Promise<void> {
		this.watch?.close();
		this.store.destroy();
	}
}

/** Files kept by identity only compare by identity; everything else by state. */
function differs(b: ScannedEntry, a: ScannedEntry): boolean {
	if (
		b.state.kind === "file" &&
		a.state.kind === "file" &&
		(b.state.sha256 === null || a.state.sha256 === null)
	)
		return b.identity !== a.identity || b.state.mode !== a.state.mode;
	return !sameState(b.state, a.state);
}

/** The changes of a partial scan: each replaced entry as it was against what is there now. */
function changesFromPriors(
	priors: ReadonlyMap<string, ScannedEntry | undefined>,
	index: TreeIndex,
): PathChange[] {
	const changes: PathChange[] = [];
	for (const [path, b] of priors) {
		const a = index.get(path);
		if (!b && !a) continue;
		if (!b) changes.push({ path, before: { kind: "absent" }, after: a!.state });
		else if (!a) changes.push({ path, before: b.state, after: { kind: "absent" } });
		else if (differs(b, a)) changes.push({ path, before: b.state, after: a.state });
	}
	return changes.sort((x, y) => (x.path < y.path ? -1 : 1));
}

export function changesBetween(before: TreeIndex, after: TreeIndex): PathChange[] {
	const changes: PathChange[] = [];
	for (const [path, b] of before) {
		const a = after.get(path);
		if (!a) changes.push({ path, before: b.state, after: { kind: "absent" } });
		else if (differs(b, a)) changes.push({ path, before: b.state, after: a.state });
	}
	for (const [path, a] of after)
		if (!before.has(path)) changes.push({ path, before: { kind: "absent" }, after: a.state });
	return changes.sort((x, y) => (x.path < y.path ? -1 : 1));
}
