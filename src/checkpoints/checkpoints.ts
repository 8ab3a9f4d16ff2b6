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
import { jsdiff } from "../edit/jsdiff.js";
import type { Access, ResolvedPath } from "../safety/path-guard.js";
import type { StateDir } from "../safety/state-dir.js";
import type { TransactionHost } from "../safety/transaction.js";
import { LocalTreeSource } from "./local-source.js";
import { applyRestore, conflictError, type PlannedPath, type RestoreProblem } from "./restore.js";
import type { TreeSource } from "./source.js";
import {
	type Checkpoint,
	type CheckpointBudgets,
	DEFAULT_BUDGETS,
	describeState,
	type PathState,
	sameState,
} from "./types.js";

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
	changes: Array<{ path: string; was: string; now: string }>;
	/** A unified diff of the text files, bounded. */
	patch: string;
}

const PATCH_CHARS = 20_000;
const DIFF_MAX_BYTES = 256 * 1024;
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

	/** For each path changed after checkpoint `id`: its state then, its state now, and who changed it. */
	private since(id: number): Map<string, { was: PathState; now: PathState; outside: number | undefined }> {
		const paths = new Map<string, { was: PathState; now: PathState; outside: number | undefined }>();
		for (const cp of this.kept) {
			if (cp.id <= id) continue;
			for (const c of cp.changes) {
				const seen = paths.get(c.path) ?? { was: c.before, now: c.after, outside: undefined };
				seen.now = c.after;
				if (cp.tool === "outside" && seen.outside === undefined) seen.outside = cp.id;
				paths.set(c.path, seen);
			}
		}
		return paths;
	}

	/** What changed since checkpoint `id` (a unified diff of the text files, bounded). */
	diff(id: unknown): Promise<DiffResult> {
		return this.exclusive(async () => {
			await this.capture("outside");
			const from = this.checkpointAt(id);
			const changes: DiffResult["changes"] = [];
			let patch = "";
			for (const [path, s] of this.since(from)) {
				if (sameState(s.was, s.now)) continue;
				changes.push({ path, was: describeState(s.was), now: describeState(s.now) });
				if (patch.length < PATCH_CHARS) patch += await this.textPatch(path, s.was, s.now);
			}
			if (patch.length > PATCH_CHARS)
				patch = `${patch.slice(0, PATCH_CHARS)}\n[diff cut at ${PATCH_CHARS} characters]\n`;
			return { from, changes, patch };
		});
	}

	private async textPatch(path: string, was: PathState, now: PathState): Promise<string> {
		const text = async (s: PathState) => {
			if (s.kind === "absent") return "";
			// Binary, unkept and large files are named in the change list, not diffed (a diff of two
			// large texts costs time quadratic in their difference).
			if (s.kind !== "file" || !s.sha256 || s.size > DIFF_MAX_BYTES) return undefined;
			const bytes = await this.source.blob(s.sha256);
			return bytes && !bytes.includes(0) ? bytes.toString("utf8") : undefined;
		};
		const a = await text(was);
		const b = await text(now);
		if (a === undefined || b === undefined) return "";
		return jsdiff().createTwoFilesPatch(
			was.kind === "absent" ? "/dev/null" : path,
			now.kind === "absent" ? "/dev/null" : path,
			a,
			b,
			"",
			"",
			{ context: 3 },
		);
	}

	/**
	 * Make the workspace what it was at checkpoint `id` (default: before the last call that
	 * changed something). All or nothing unless `force`; see the contract above.
	 */
	restore(id?: unknown, opts: { force?: boolean } = {}): Promise<RestoreResult> {
		return this.exclusive(async () => {
			await this.capture("outside");
			const to = id === undefined ? this.lastCallBase() : this.checkpointAt(id);
			const plan: PlannedPath[] = [];
			const conflicts: RestoreProblem[] = [];
			for (const [path, s] of this.since(to)) {
				if (sameState(s.was, s.now)) continue;
				const problem = await this.blocker(path, s);
				if (problem) {
					conflicts.push({ path, problem });
					continue;
				}
				const bytes =
					s.was.kind === "file" ? ((await this.source.blob(s.was.sha256!)) ?? undefined) : undefined;
				plan.push({ path, now: s.now, target: s.was, bytes });
			}
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

	/** Why `path` cannot be put back, if it cannot. */
	private async blocker(
		path: string,
		s: { was: PathState; now: PathState; outside: number | undefined },
	): Promise<string | undefined> {
		if (s.outside !== undefined)
			return `changed outside keel's calls (checkpoint ${s.outside}); it is now ${describeState(s.now)}`;
		const t = s.was;
		if (t.kind === "other") return "was a FIFO, socket or device, which a restore does not make";
		if (t.kind === "file" && !t.sha256)
			return "its bytes were past the budget when it was seen (kept by identity only)";
		if (t.kind === "file" && !(await this.source.blob(t.sha256!)))
			return "its kept bytes are missing or damaged";
		if ((t.kind === "dir") !== (s.now.kind === "dir") && s.now.kind !== "absent" && t.kind !== "absent")
			return `it is now ${describeState(s.now)} and was ${describeState(t)}: restore it by hand`;
		try {
			await this.host.resolvePath(path, "write");
		} catch (e) {
			return e instanceof KeelError ? `${e.code}: ${e.message}` : String(e);
		}
		return undefined;
	}

	/** Remove the store (at session close). */
	close(): Promise<void> {
		return this.source.close();
	}
}
