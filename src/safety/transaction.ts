/**
 * All-or-nothing commits of a planned multi-file change. Every change was
 * planned and preflighted by the caller, inside the mutation queues of every path it touches
 * (`withPaths`). Then:
 *   one file:   one compare-and-swap commit; atomic by itself, no journal;
 *   several:    the intent journal (safety/journal.ts) is written first, then each file is
 *               committed in turn by compare-and-swap; if one fails, every file already committed
 *               by this call is restored (its previous bytes and mode, removed if it was created,
 *               recreated if it was deleted), each restore itself a compare-and-swap against the
 *               bytes this call wrote, so a change someone else made meanwhile is never clobbered.
 * A restore that cannot be done safely is named in the error with the file's state, and its
 * previous bytes stay in the journal directory for the user.
 *
 * A file counts as committed from the moment it is visible (its link, rename or unlink
 * returned). An error after that point (the directory's fsync, the temp name's unlink) does not
 * undo the file: the change rolls forward, every other file is committed too, and the error says
 * that everything is in place but the disk reported an error (details.allOrNothing "all-new").
 * An error before any file was visible (the journal could not be written) changed nothing.
 *
 * The caller's plan → commit split is where a re-plan on CHANGED_ON_DISK can hook in: the error
 * says nothing was changed (details.allOrNothing === "rolled-back" or "nothing-committed").
 * What a failed commit says is in commit-outcome.ts.
 */
import type { FileStat } from "../backend/types.js";
import { isAfterCommit, KeelError } from "../boundary/errors.js";
import { committedButError, fromSystemError } from "../boundary/system-errors.js";
import type { ToolHost } from "../tool-host.js";
import { journalError, type Unresolved, withOutcome } from "./commit-outcome.js";
import type { ContentSource } from "./content-refs.js";
import type { JournalFile, OpenIntent } from "./journal.js";
import { sha256 } from "./read-state.js";

export type Before =
	| { kind: "absent" }
	/** `bytes` is needed only when the change has more than one file (it is the restore copy). */
	| { kind: "file"; stat: FileStat; sha256: string; bytes?: Uint8Array }
	| { kind: "link"; stat: FileStat; target: string };

export type After =
	| { kind: "absent" }
	| { kind: "data"; data: Uint8Array; mode?: number }
	| { kind: "copy"; source: ContentSource };

export interface Change {
	canonical: string;
	/** The path as the model wrote it. */
	shown: string;
	before: Before;
	after: After;
}

export interface Committed {
	/** The new file's stat (undefined for a removal). */
	stat?: FileStat;
	sha256?: string;
	/** The change is in place, but a step after it failed (e.g. the directory's fsync). */
	late?: KeelError;
}

/** Run `task` holding the mutation queue of every path in `keys` (sorted, so two changes never deadlock). */
/** The parts of a tool host a multi-file change uses. */
export type TransactionHost = Pick<ToolHost, "files" | "readState" | "queue" | "journal">;

export function withPaths<T>(
	host: Pick<ToolHost, "queue">,
	keys: string[],
	task: () => Promise<T>,
): Promise<T> {
	const sorted = [...new Set(keys)].sort();
	const enter = (i: number): Promise<T> =>
		i === sorted.length ? task() : host.queue.run(sorted[i], () => enter(i + 1));
	return enter(0);
}

function afterHash(a: After): string | undefined {
	if (a.kind === "absent") return undefined;
	return a.kind === "data" ? sha256(a.data) : a.source.sha256;
}

async function commitOne(host: TransactionHost, c: Change): Promise<Committed> {
	const fs = host.files;
	try {
		if (c.after.kind === "absent") {
			if (c.before.kind === "absent") return {};
			await fs.unlink(c.canonical, c.before.stat);
			return {};
		}
		const expect =
			c.before.kind === "file" ? { stat: c.before.stat, sha256: c.before.sha256 } : ("absent" as const);
		if (c.before.kind === "link")
			throw new KeelError("NOT_A_FILE", `${c.shown} is a symlink.`, { path: c.shown });
		const mkdirs = expect === "absent";
		if (c.after.kind === "copy") {
			const s = c.after.source;
			const stat = await fs.copyFile(s.canonical, c.canonical, {
				sourceStat: s.stat,
				sha256: s.sha256,
				expect,
				mkdirs,
			});
			return { stat, sha256: s.sha256 };
		}
		const stat = await fs.writeFile(c.canonical, c.after.data, { expect, mkdirs, mode: c.after.mode });
		return { stat, sha256: sha256(c.after.data) };
	} catch (e) {
		if (!isAfterCommit(e)) throw fromSystemError(e, c.shown);
		const hash = c.after.kind === "absent" ? undefined : afterHash(c.after);
		return { stat: e.stat, sha256: e.stat ? hash : undefined, late: committedButError(e, c.shown) };
	}
}

function record(host: TransactionHost, c: Change, out: Committed): void {
	if (out.stat && out.sha256) host.readState.recordHash(c.canonical, out.stat, out.sha256);
	else host.readState.forget(c.canonical);
}

/** Removals last, links last of all: everything else can be put back if a later commit fails. */
function commitOrder(changes: Change[]): number[] {
	const rank = (c: Change) => (c.after.kind !== "absent" ? 0 : c.before.kind === "link" ? 2 : 1);
	return changes.map((_, i) => i).sort((a, b) => rank(changes[a]) - rank(changes[b]) || a - b);
}

/** Put one committed change back, by compare-and-swap against what this call wrote. */
async function restore(host: TransactionHost, c: Change, out: Committed): Promise<string | undefined> {
	const fs = host.files;
	const b = c.before;
	try {
		if (b.kind === "link")
			return `deleted; it was a symlink to ${JSON.stringify(b.target)}, which keel cannot recreate`;
		if (b.kind === "absent") {
			await fs.unlink(c.canonical, out.stat);
			host.readState.forget(c.canonical);
			return undefined;
		}
		const data = b.bytes ?? new Uint8Array();
		const st =
			c.after.kind === "absent"
				? await fs.writeFile(c.canonical, data, { expect: "absent", mode: b.stat.mode, mkdirs: true })
				: await fs.writeFile(c.canonical, data, { expect: { stat: out.stat!, sha256: out.sha256! } });
		// The bytes are the ones this session planned on: a read of them stays a read.
		if (host.readState.get(c.canonical)) host.readState.recordHash(c.canonical, st, b.sha256);
		return undefined;
	} catch (e) {
		const err = fromSystemError(e, c.shown);
		return err.code === "CHANGED_ON_DISK" || err.code === "WRITE_COLLISION"
			? "changed by another writer after this call committed it; left as that writer made it"
			: `could not be restored (${err.code})`;
	}
}

function journalFiles(changes: Change[], order: number[]): Array<JournalFile & { bytes?: Uint8Array }> {
	return order.map((i) => {
		const c = changes[i];
		const h = afterHash(c.after);
		const b = c.before;
		return {
			path: c.canonical,
			before:
				b.kind === "absent"
					? { kind: "absent" }
					: b.kind === "link"
						? { kind: "link", target: b.target }
						: { kind: "file", sha256: b.sha256, mode: b.stat.mode, backup: "" },
			after: h ? { kind: "file", sha256: h } : { kind: "absent" },
			bytes: b.kind === "file" ? b.bytes : undefined,
		};
	});
}

/**
 * Commit every change or none. Returns each change's outcome (same order as `changes`). On
 * failure throws the failing file's KeelError, its message saying what was restored; details:
 * { failed: index, allOrNothing, restored: [paths], unresolved: [{path, state, kept}] }.
 */
export async function commitChanges(host: TransactionHost, changes: Change[]): Promise<Committed[]> {
	if (changes.length === 1) {
		const out = await commitOne(host, changes[0]).catch((e: KeelError) => {
			throw withOutcome(e, 0, "nothing-committed", [], [], changes.length);
		});
		record(host, changes[0], out);
		if (out.late) throw withOutcome(out.late, 0, "all-new", [], [], 1);
		return [out];
	}
	const order = commitOrder(changes);
	for (const i of order)
		if (changes[i].before.kind === "file" && !(changes[i].before as { bytes?: Uint8Array }).bytes) {
			throw new KeelError(
				"INTERNAL",
				"a multi-file change needs the previous bytes of every file it replaces.",
			);
		}
	let intent: OpenIntent;
	try {
		intent = await host.journal.begin(journalFiles(changes, order));
	} catch (e) {
		throw withOutcome(
			journalError(e, host.journal.dir),
			order[0],
			"nothing-committed",
			[],
			[],
			changes.length,
		);
	}
	const outcomes: Committed[] = new Array(changes.length);
	const done: number[] = [];
	for (const i of order) {
		try {
			outcomes[i] = await commitOne(host, changes[i]);
			done.push(i);
		} catch (e) {
			const err = fromSystemError(e, changes[i].shown);
			const restored: string[] = [];
			const unresolved: Unresolved[] = [];
			for (const j of done.reverse()) {
				const problem = await restore(host, changes[j], outcomes[j]);
				if (problem) unresolved.push({ path: changes[j].shown, state: problem });
				else restored.push(changes[j].shown);
			}
			if (unresolved.length === 0) await intent.end();
			else {
				const kept = await intent.keepUnresolved().catch(() => intent.txDir);
				for (const u of unresolved) u.kept = kept;
			}
			throw withOutcome(
				err,
				i,
				done.length === 0 ? "nothing-committed" : unresolved.length ? "partial" : "rolled-back",
				restored,
				unresolved,
				changes.length,
			);
		}
	}
	// Every file is in place: a record that could not be removed is found complete by the next
	// session's recovery and removed then; it does not make this call a failure.
	await intent.end();
	for (const i of order) record(host, changes[i], outcomes[i]);
	const late = order.filter((i) => outcomes[i].late);
	if (late.length > 0) {
		const first = outcomes[late[0]].late!;
		const err = new KeelError(
			first.code,
			`All ${changes.length} files were changed and are in place, but the system reported an error making ${late.map((i) => changes[i].shown).join(", ")} durable (${first.message.match(/\((E[A-Z0-9]+)\)/)?.[1] ?? first.code}); check the disk before relying on them, and do not redo the change.`,
			{ path: first.path, cause: first, details: { committed: true } },
		);
		throw withOutcome(
			err,
			late[0],
			"all-new",
			changes.map((c) => c.shown),
			[],
			changes.length,
		);
	}
	return outcomes;
}
