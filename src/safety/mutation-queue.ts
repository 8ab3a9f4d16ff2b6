/**
 * Per-path FIFO mutation queue (REQUIREMENTS M1), keyed by canonical path and owned by a session or
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
