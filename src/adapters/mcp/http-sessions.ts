/**
 * The HTTP transport's open MCP sessions, with a cap. When a new session would pass the cap, only a
 * session that has been idle (no request in flight, none for `idleMs`) is closed to make room, the
 * longest idle first; when every session is busy or recent, the new one is refused (the caller
 * answers 503), so no client loses its read state to a newcomer.
 */

export interface Closable {
	close(): Promise<void>;
}

interface Entry<C> {
	conn: C;
	lastActive: number;
	/** Requests in flight (POSTs; a long-lived GET stream does not keep a session busy). */
	busy: number;
}

export interface SessionLimits {
	maxSessions: number;
	idleMs: number;
	now?: () => number;
}

export class SessionTable<C extends Closable> {
	private readonly entries = new Map<string, Entry<C>>();
	/** Initializes admitted but not yet finished: they hold a place. */
	private reserved = 0;
	private readonly now: () => number;

	constructor(
		private readonly limits: SessionLimits,
		private readonly log: (line: string) => void,
	) {
		this.now = limits.now ?? (() => performance.now());
	}

	get size(): number {
		return this.entries.size;
	}

	values(): C[] {
		return [...this.entries.values()].map((e) => e.conn);
	}

	/** The session; only POSTs (begin) count as activity, not a client's GET stream reconnecting. */
	get(id: string): C | undefined {
		return this.entries.get(id)?.conn;
	}

	delete(id: string): void {
		this.entries.delete(id);
	}

	/** A request for session `id` starts; the returned function ends it. */
	begin(id: string): () => void {
		const e = this.entries.get(id);
		if (!e) return () => {};
		e.busy++;
		e.lastActive = this.now();
		let ended = false;
		return () => {
			if (ended) return;
			ended = true;
			e.busy--;
			e.lastActive = this.now();
		};
	}

	/**
	 * Holds a place for a new session, closing idle sessions if the table is full. Returns the release
	 * function, or undefined when there is no room.
	 */
	reserve(): (() => void) | undefined {
		while (this.entries.size + this.reserved >= this.limits.maxSessions) {
			if (!this.evictIdle()) return undefined;
		}
		this.reserved++;
		let released = false;
		return () => {
			if (released) return;
			released = true;
			this.reserved--;
		};
	}

	add(id: string, conn: C): void {
		this.entries.set(id, { conn, lastActive: this.now(), busy: 0 });
	}

	private evictIdle(): boolean {
		const now = this.now();
		let oldest: [string, Entry<C>] | undefined;
		for (const pair of this.entries) {
			const e = pair[1];
			if (e.busy > 0 || now - e.lastActive < this.limits.idleMs) continue;
			if (!oldest || e.lastActive < oldest[1].lastActive) oldest = pair;
		}
		if (!oldest) return false;
		this.entries.delete(oldest[0]);
		const idleS = Math.round((now - oldest[1].lastActive) / 1000);
		this.log(`keel: MCP sessions at the cap (${this.limits.maxSessions}); closing one idle for ${idleS} s.`);
		oldest[1].conn.close().catch(() => {});
		return true;
	}
}
