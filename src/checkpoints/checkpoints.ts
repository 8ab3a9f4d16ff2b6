/**
 * Checkpoints of every change a session's calls make, the shell's and Python's included, and
 * restores to any of them.
 *
 * Contract:
 * - Every call of a tool that can change files runs inside `around()`: the workspace is scanned
 *   before it (what changed since the last scan was made outside keel's calls: the user, a
 *   background process, another program; it is recorded as an "outside" checkpoint) and after it
 *   (what changed is the call's). Such calls run one at a time while checkpoints are on, so each
 *   change belongs to exactly one checkpoint. The first scan is checkpoint 0.
 * - Checkpoint N is the workspace as it was after the N-th recorded change. `restore(N)` makes
 *   every path that changed after N what it was at N, by compare-and-swap: a path changed after N
 *   by something other than keel's calls, or one whose old bytes were not kept, is a conflict;
 *   with any conflict nothing changes unless `force` (then everything else is restored and the
 *   conflicts are left as they are). A restore is itself a checkpoint, so it can be undone.
 * - Kept: regular files' bytes and modes, symlinks' targets, directories and their modes. Left
 *   out by rule: `.git`, `node_modules` and other regenerated directories, what `.gitignore`
 *   says, files past the per-file budget (kept by identity, named as not restorable). Budgets drop
 *   the oldest checkpoints first. Nothing is written inside the workspace; the bytes live in a
 *   private directory of keel's state that sandboxed commands cannot see, and are used only when
 *   they hash to their name.
 * - Not seen: changes between two scans that undo themselves, and ownership, xattrs, hard-link
 *   structure and FIFOs/devices (seen, never restored).
 */
import { KeelError } from "../boundary/errors.js";
import type { Access, ResolvedPath } from "../safety/path-guard.js";
import type { StateDir } from "../safety/state-dir.js";
import type { TransactionHost } from "../safety/transaction.js";
import { diffOf, type TextDiff } from "./diff.js";
import { LocalTreeSource } from "./local-source.js";
import { applyRestore, conflictError, type RestoreProblem } from "./restore.js";
import { changesSince, planRestore } from "./restore-plan.js";
import type { TreeSource } from "./source.js";
import { type Checkpoint, type CheckpointBudgets, DEFAULT_BUDGETS } from "./types.js";

/** What checkpoints use of the session: its commit (for file contents) and its path guard. */
export interface CheckpointHost extends TransactionHost {
	resolvePath(input: unknown, access: Access): Promise<ResolvedPath>;
}

export interface CheckpointSummary {
	id: number;
	tool: string;
	at: number;
	/** Paths it changed (at most 20 named; `fileCount` counts them all). */
	files: string[];
	fileCount: number;
}

export interface CheckpointListing {
	checkpoints: CheckpointSummary[];
	/** Left out by rule (ignored directories and files), at most 50 named. */
	leftOut: string[];
	leftOutCount: number;
	/** Files kept by identity only (past a byte budget): a restore cannot put them back. */
	notRestorable: string[];
	/** Checkpoints dropped to stay within the budgets. */
	dropped: number;
	/** The tree has more entries than the scan budget; only the first ones are checkpointed. */
	truncated: boolean;
	storeBytes: number;
}

export interface RestoreResult {
	/** The checkpoint the workspace was restored to. */
	to: number;
	/** The checkpoint that records the restore (undo it by restoring the one before). */
	checkpoint: number | undefined;
	restored: string[];
	/** Paths left as they are (with `force`), or that a step could not finish. */
	problems: RestoreProblem[];
}

export interface DiffResult {
	from: number;
	changes: TextDiff["changes"];
	/** A unified diff of the text files, bounded. */
	patch: string;
}

const NAMED = 20;

export class Checkpoints {
	private started = false;
	private readonly kept: Checkpoint[] = [];
	private nextId = 0;
	private dropped = 0;
	private lastScan = { leftOut: [] as string[], leftOutCount: 0, truncated: false };
	private readonly notRestorable = new Set<string>();
	/** Calls that change files, and the listing and restores, one at a time. */
	private gate: Promise<unknown> = Promise.resolve();

	constructor(
		private readonly host: CheckpointHost,
		private readonly source: TreeSource,
		readonly budgets: CheckpointBudgets,
	) {}

	/** Checkpoints of this machine's files, kept in a new private directory of `state`. */
	static openLocal(
		host: CheckpointHost,
		roots: readonly string[],
		state: StateDir,
		budgets: Partial<CheckpointBudgets> = {},
	): Checkpoints {
		const all = { ...DEFAULT_BUDGETS, ...budgets };
		return new Checkpoints(host, LocalTreeSource.open(state, roots, all), all);
	}

	private exclusive<T>(task: () => Promise<T> | T): Promise<T> {
		const run = this.gate.then(task, task);
		this.gate = run.catch(() => {});
		return run;
	}

	/** Run one call that can change files between two scans; its changes become a checkpoint. */
	around<T>(tool: string, call: () => Promise<T>): Promise<T> {
		return this.exclusive(async () => {
			await this.capture("outside");
			try {
				return await call();
			} finally {
				await this.capture(tool);
			}
		});
	}

	/** Scan, and record what changed since the last scan as a checkpoint of `tool`. */
	private async capture(tool: string): Promise<void> {
		const room = Math.max(
			0,
			Math.min(this.budgets.maxCheckpointBytes, this.budgets.maxStoreBytes - this.source.storeBytes()),
		);
		const scan = await this.source.capture(room);
		this.lastScan = { leftOut: scan.leftOut, leftOutCount: scan.leftOutCount, truncated: scan.truncated };
		for (const p of scan.identityOnly) this.notRestorable.add(p);
		if (!this.started) {
			this.started = true;
			this.kept.push({ id: this.nextId++, tool: "start", at: Date.now(), changes: [] });
			return;
		}
		if (scan.changes.length === 0) return;
		this.kept.push({ id: this.nextId++, tool, at: Date.now(), changes: scan.changes });
		await this.enforceBudgets();
	}

	private async enforceBudgets(): Promise<void> {
		const over = () =>
			this.kept.length - 1 > this.budgets.maxCheckpoints ||
			this.source.storeBytes() > this.budgets.maxStoreBytes;
		while (over() && this.kept.length > 1) {
			this.kept.shift();
			this.dropped++;
			await this.source.retain(this.neededBlobs());
		}
	}

	/** Blobs a restore to a kept checkpoint can need (the source keeps the latest scan's too). */
	private neededBlobs(): Set<string> {
		const need = new Set<string>();
		for (const cp of this.kept.slice(1))
			for (const c of cp.changes) if (c.before.kind === "file" && c.before.sha256) need.add(c.before.sha256);
		return need;
	}

	/** The kept checkpoints, oldest first, and what the scans leave out. */
	list(): Promise<CheckpointListing> {
		return this.exclusive(async () => {
			await this.capture("outside");
			return {
				checkpoints: this.kept.map((cp) => ({
					id: cp.id,
					tool: cp.tool,
					at: cp.at,
					files: cp.changes.slice(0, NAMED).map((c) => c.path),
					fileCount: cp.changes.length,
				})),
				leftOut: this.lastScan.leftOut,
				leftOutCount: this.lastScan.leftOutCount,
				notRestorable: [...this.notRestorable].slice(0, NAMED),
				dropped: this.dropped,
				truncated: this.lastScan.truncated,
				storeBytes: this.source.storeBytes(),
			};
		});
	}

	private checkpointAt(id: unknown): number {
		if (typeof id !== "number" || !Number.isInteger(id) || !this.kept.some((cp) => cp.id === id)) {
			const ids = this.kept.map((cp) => cp.id);
			throw new KeelError(
				"UNKNOWN_CHECKPOINT",
				`No checkpoint ${JSON.stringify(id)}: the kept ones are ${ids.length ? `${ids[0]}..${ids[ids.length - 1]}` : "none yet"}${this.dropped ? ` (${this.dropped} older ones were dropped by the budgets)` : ""}.`,
			);
		}
		return id;
	}

	/** What changed since checkpoint `id` (a unified diff of the text files, bounded). */
	diff(id: unknown): Promise<DiffResult> {
		return this.exclusive(async () => {
			await this.capture("outside");
			const from = this.checkpointAt(id);
			return { from, ...(await diffOf(this.source, changesSince(this.kept, from))) };
		});
	}

	/**
	 * Make the workspace what it was at checkpoint `id` (default: before the last call that
	 * changed something). All or nothing unless `force`; see the contract above.
	 */
	restore(id?: unknown, opts: { force?: boolean } = {}): Promise<RestoreResult> {
		return this.exclusive(async () => {
			await this.capture("outside");
			const to = id === undefined ? this.lastCallBase() : this.checkpointAt(id);
			const { plan, conflicts } = await planRestore(this.host, this.source, changesSince(this.kept, to));
			if (conflicts.length > 0 && !opts.force) throw conflictError(conflicts);
			let problems: RestoreProblem[] = [];
			try {
				problems = await applyRestore(this.host, this.source, plan);
			} finally {
				await this.capture("restore");
			}
			const checkpoint = this.kept.at(-1)?.tool === "restore" ? this.kept.at(-1)?.id : undefined;
			const failed = new Set(problems.map((p) => p.path));
			return {
				to,
				checkpoint,
				restored: plan.map((p) => p.path).filter((p) => !failed.has(p)),
				problems: [...conflicts, ...problems],
			};
		});
	}

	/** The checkpoint before the last one a call made (what "undo" goes back to). */
	private lastCallBase(): number {
		const last = [...this.kept].reverse().find((cp) => cp.tool !== "outside" && cp.tool !== "start");
		if (!last)
			throw new KeelError(
				"UNKNOWN_CHECKPOINT",
				"No call has changed anything yet: there is nothing to undo.",
			);
		const i = this.kept.indexOf(last);
		if (i === 0)
			throw new KeelError(
				"UNKNOWN_CHECKPOINT",
				"The checkpoint before the last call was dropped by the budgets.",
			);
		return this.kept[i - 1].id;
	}

	/** Remove the store (at session close). */
	close(): Promise<void> {
		return this.source.close();
	}
}
