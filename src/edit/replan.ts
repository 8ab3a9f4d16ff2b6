/**
 * Re-planning a text-anchored edit. An edit found
 * by its text (pi's edit; the file tool's exact and normalized edits; apply_patch hunks, which are
 * found by their context lines) still means the same thing on a file another writer changed
 * elsewhere, as long as its anchors still match uniquely. So when the compare-and-swap fails
 * because the file changed, the edit is planned again on the new bytes and committed, at most
 * MAX_REPLANS times; it fails only on a real conflict (an anchor gone or ambiguous), saying so.
 * Line-range and hashline edits and whole-file overwrites never re-plan: they were planned on line
 * numbers or a whole read, which another writer's change silently moves.
 *
 * The caller supplies the three steps; nothing here knows about edits or files:
 *   read()            the file as it is now (inside the path's mutation queue);
 *   plan(snapshot)    the change on those bytes, or throw (NO_MATCH, AMBIGUOUS_MATCH, ...);
 *   commit(p, snap)   compare-and-swap against `snap`; throw CHANGED_ON_DISK if another writer won.
 */
import { KeelError } from "../boundary/errors.js";

/** How many times one edit is planned again before it gives up. */
export const MAX_REPLANS = 8;

/**
 * The pause before re-planning: the writer that won is usually mid-burst (another agent's edits),
 * so back off exponentially, with jitter so two processes do not retry in lockstep. At most
 * about 0.8 s over all re-plans, spent inside this path's queue.
 */
/** Wait before planning again after losing to another writer (short, growing). */
export function replanBackoff(replans: number): Promise<void> {
	return new Promise((r) => setTimeout(r, backoffMs(replans)));
}

function backoffMs(replans: number): number {
	return Math.min(200, 5 * 2 ** replans) * (0.5 + Math.random());
}

export interface ReplanSteps<S, P, R> {
	read(): Promise<S>;
	plan(snapshot: S): P;
	commit(plan: P, snapshot: S): Promise<R>;
}

export interface Replanned<R> {
	result: R;
	/** How many times the edit was planned again on bytes another writer left (0: never). */
	replans: number;
}

export interface ReplanOptions<S, P> {
	/** The file as first read and the plan made on it (the preflight's), when there is one. */
	first?: { snapshot: S; plan: P };
	/** False for edits that must not re-plan: then the first CHANGED_ON_DISK stands. */
	replannable: boolean;
	/** The path as the model wrote it, for messages. */
	shown: string;
}

const CONFLICT_CODES = new Set([
	"NO_MATCH",
	"AMBIGUOUS_MATCH",
	"EDIT_OVERLAP",
	"NO_CHANGE",
	"ENCODING_UNSAFE",
]);

/** Plan, commit, and on a lost compare-and-swap plan again on the new bytes (bounded). */
export async function commitReplanning<S, P, R>(
	steps: ReplanSteps<S, P, R>,
	opts: ReplanOptions<S, P>,
): Promise<Replanned<R>> {
	let snapshot: S;
	let plan: P;
	if (opts.first) ({ snapshot, plan } = opts.first);
	else {
		snapshot = await readSettled(steps.read);
		plan = steps.plan(snapshot);
	}
	for (let replans = 0; ; replans++) {
		try {
			return { result: await steps.commit(plan, snapshot), replans };
		} catch (e) {
			if (!(e instanceof KeelError) || e.code !== "CHANGED_ON_DISK" || !opts.replannable) throw e;
			if (replans >= MAX_REPLANS) throw replansExhausted(opts.shown);
		}
		await new Promise((r) => setTimeout(r, backoffMs(replans)));
		snapshot = await rereadAfterChange(steps, opts.shown);
		plan = replanOn(steps, snapshot, opts.shown, replans + 1);
	}
}

/**
 * The failure once MAX_REPLANS re-plans all lost to other writers: the one message for edit and
 * file, saying what happened, how often it retried and what to do next. The file tool adds its
 * query prefix (`where`), its "Nothing was changed." (`note`) and its commit outcome (`details`).
 */
export function replansExhausted(
	shown: string,
	more: { where?: string; note?: string; details?: Record<string, unknown> } = {},
): KeelError {
	return new KeelError(
		"CHANGED_ON_DISK",
		`${more.where ?? ""}${shown} kept changing under other writers; the edit was planned again ${MAX_REPLANS} times and never committed. Read it again and retry.${more.note ?? ""}`,
		{ path: shown, details: { ...more.details, replans: MAX_REPLANS } },
	);
}

/** Reads retried when the file was replaced while being opened (a writer's rename landed mid-read). */
const READ_ATTEMPTS = 4;

/** `read()`, retried (bounded) while another writer's replace lands between its stat and its open. */
export async function readSettled<S>(read: () => Promise<S>): Promise<S> {
	for (let attempt = 1; ; attempt++) {
		try {
			return await read();
		} catch (e) {
			if (!(e instanceof KeelError) || e.code !== "CHANGED_ON_DISK" || attempt >= READ_ATTEMPTS) throw e;
			await new Promise((r) => setTimeout(r, backoffMs(attempt)));
		}
	}
}

/** The file another writer left; when it is no longer a text file there (gone, a link, a directory), say so. */
async function rereadAfterChange<S>(
	steps: Pick<ReplanSteps<S, unknown, unknown>, "read">,
	shown: string,
): Promise<S> {
	try {
		return await readSettled(steps.read);
	} catch (e) {
		if (!(e instanceof KeelError) || e.retry !== "retarget") throw e;
		throw new KeelError(
			"CHANGED_ON_DISK",
			`${shown} was replaced by another writer with something this edit cannot apply to (${e.code}); look at it again before editing.`,
			{ path: shown, details: { conflict: true } },
		);
	}
}

/** The plan on bytes another writer left; a failure there is a real conflict and says so. */
export function replanOn<S, P>(
	steps: Pick<ReplanSteps<S, P, unknown>, "plan">,
	snapshot: S,
	shown: string,
	replans: number,
): P {
	try {
		return steps.plan(snapshot);
	} catch (e) {
		if (!(e instanceof KeelError) || !CONFLICT_CODES.has(e.code)) throw e;
		throw new KeelError(
			e.code,
			`${shown} was changed by another writer, and on its new content this edit conflicts: ${e.message} Read the file again and redo the edit.`,
			{ path: e.path ?? shown, details: { ...e.details, conflict: true, replans } },
		);
	}
}

/** "" or " (re-planned N time(s) ...)": what a result says when its edit was planned again. */
export function replanNote(replans: number): string {
	return replans === 0
		? ""
		: ` (re-planned ${replans} time(s): another writer changed the file; the edit's anchors still matched uniquely on its new content)`;
}
