/**
 * What a session opens before it exists: its roots and path guard, its spill directory, keel's
 * state directory, the journal (and the recovery of what a dead process left in it), the writer
 * log, the payload store and the workspace's mutation queue. Apart from the session, which only
 * holds these, so that the order of opening (and why each step comes where it does) reads in one place.
 */
import { randomBytes } from "node:crypto";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createLocalFs } from "./backend/local/fs.js";
import type { Backend, FileOps } from "./backend/types.js";
import { SpillDir } from "./boundary/spill.js";
import { Journal } from "./safety/journal.js";
import { QueueRegistry } from "./safety/mutation-queue.js";
import { PathGuard } from "./safety/path-guard.js";
import { PayloadStore } from "./safety/payloads.js";
import { recoverJournal } from "./safety/recovery.js";
import { defaultStateDir, StateDir } from "./safety/state-dir.js";
import { WriterLog } from "./safety/writer-log.js";
import type { SessionOptions } from "./session-types.js";

/** Backends whose files are this machine's files (bwrap sandboxes commands, not files). */
export function filesAreLocal(backend: Backend): boolean {
	return backend.localFiles === true;
}

/** Spill files read on this machine when the backend's files are elsewhere, through a guard of their own. */
export interface LocalSpillFiles {
	guard: PathGuard;
	fs: FileOps;
}

/** Everything a session holds that is opened before it: see openWorkspace. */
export type OpenedWorkspace = Awaited<ReturnType<typeof openWorkspace>>;

/** Opens, in order, what a session over `backend` holds (SessionOptions as createSession got them). */
export async function openWorkspace(backend: Backend, opts: SessionOptions) {
	const root = resolve(opts.root ?? process.cwd());
	// A spill directory of this session's own, readable through this session's guard only.
	const spill = await SpillDir.create(opts.spillDir);
	const spillDir = spill.dir;
	// keel's own state is never writable through the tools (it is also kept out of every root below).
	const requestedState = resolve(opts.stateDir ?? defaultStateDir());
	const guard = await PathGuard.create(backend.fs, {
		roots: [root, ...(opts.allow ?? []).map((p) => resolve(root, p))],
		// Spill files are on this machine: readable through the guard when the backend's files are too.
		readOnlyRoots: [
			...(opts.allowRead ?? []).map((p) => resolve(root, p)),
			...(filesAreLocal(backend) ? [spillDir] : []),
		],
		home: opts.home ?? homedir(),
		allowProtected: opts.allowProtected,
		protectedPaths: [...(opts.protectedPaths ?? []), ...(filesAreLocal(backend) ? [requestedState] : [])],
	});
	const state = StateDir.choose(
		requestedState,
		filesAreLocal(backend) ? [...guard.roots, ...guard.readOnlyRoots] : [],
	);
	// Temp files of a writer that was killed mid-commit are swept from the workspace root; every
	// other directory is swept the first time this session writes into it.
	await backend.fs.sweepTemps(guard.workspace);
	// A multi-file change cut off by a crash is finished (rolled back or forward) before anything else.
	const payloadDir = join(tmpdir(), `keel-payloads-${process.pid}-${randomBytes(6).toString("hex")}`);
	// keel's own state is never something a sandboxed command can read or plant (the requested
	// directory too, when the state moved away from it).
	backend.hideFromCommands?.([...new Set([requestedState, state.dir]), spillDir, payloadDir]);
	const journal = new Journal(state, backend.kind, guard.workspace, guard.roots);
	const recovery = await recoverJournal(backend.fs, guard, journal);
	// Temp files a killed writer left wherever it wrote, not only where this session will write.
	const writerLog = new WriterLog(state);
	if (filesAreLocal(backend)) await writerLog.sweepDead(backend.fs, guard.roots);
	const payloads = new PayloadStore(payloadDir, opts.payloadLimits);
	let spillFiles: LocalSpillFiles | undefined;
	if (!filesAreLocal(backend)) {
		const fs = createLocalFs();
		spillFiles = { fs, guard: await PathGuard.create(fs, { roots: [spillDir], home: homedir() }) };
	}
	const queue = (opts.queues ?? new QueueRegistry()).acquire(guard.workspace);
	return { spill, guard, state, journal, recovery, writerLog, payloads, spillFiles, queue };
}
