/**
 * Per-path FIFO mutation queue, keyed by canonical path and owned by a session or
 * workspace: unrelated sessions never wait on each other.
 */
export class MutationQueue {
	private readonly tails = new Map<string, Promise<void>>();

	/** Run `task` after every earlier task on `key` has settled. */
	run<T>(key: string, task: () => Promise<T>): Promise<T> {
		const previous = this.tails.get(key) ?? Promise.resolve();
		const result = previous.then(task);
		const tail = result.then(
			() => undefined,
			() => undefined,
		);
		this.tails.set(key, tail);
		// Forget the key once nothing is queued behind this task, so the map does not grow.
		void tail.then(() => {
			if (this.tails.get(key) === tail) this.tails.delete(key);
		});
		return result;
	}

	/** Number of paths with queued work (for tests and diagnostics). */
	get size(): number {
		return this.tails.size;
	}
}

/**
 * The mutation queues of the workspaces one process serves (the workspace as owner):
 * sessions on the same workspace share one queue, so their same-file commits wait for each other
 * instead of racing to a compare-and-swap failure. Made once by whatever hosts many sessions (the
 * MCP server) and handed to each; a queue is dropped when its last session releases it. A session
 * created without a registry owns a queue of its own.
 */
export class QueueRegistry {
	private readonly byWorkspace = new Map<string, { queue: MutationQueue; users: number }>();

	/** The queue of `workspace` (a canonical root) and the function that gives it back. */
	acquire(workspace: string): { queue: MutationQueue; release: () => void } {
		let entry = this.byWorkspace.get(workspace);
		if (!entry) {
			entry = { queue: new MutationQueue(), users: 0 };
			this.byWorkspace.set(workspace, entry);
		}
		entry.users++;
		const held = entry;
		let released = false;
		return {
			queue: held.queue,
			release: () => {
				if (released) return;
				released = true;
				held.users--;
				if (held.users === 0 && this.byWorkspace.get(workspace) === held) this.byWorkspace.delete(workspace);
			},
		};
	}

	/** Workspaces with a live queue (for tests and diagnostics). */
	get size(): number {
		return this.byWorkspace.size;
	}
}
