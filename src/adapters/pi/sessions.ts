/**
 * One keel Session per pi session (REQUIREMENTS R1). It is opened on the first tool call, for the
 * root and options then in force; a call with a different root (a session switch to another cwd)
 * closes the old one and opens a new one; pi's session_shutdown closes it.
 */
import { Session, type SessionOptions } from "../../session.js";

export type SessionFactory = (opts: SessionOptions) => Promise<Session>;

export class SessionSlot {
	private current: { key: string; session: Promise<Session> } | undefined;

	constructor(private readonly create: SessionFactory = (o) => Session.create(o)) {}

	/** The session for `opts`, opened once; concurrent first calls share it. */
	get(opts: SessionOptions): Promise<Session> {
		const key = JSON.stringify([opts.root, opts.profile, opts.allow, opts.allowRead, opts.disabledTools]);
		if (this.current?.key === key) return this.current.session;
		void this.close();
		const session = this.create(opts);
		const entry = { key, session };
		this.current = entry;
		// A failed open (a missing root, say) is not cached: the next call tries again.
		session.catch(() => {
			if (this.current === entry) this.current = undefined;
		});
		return session;
	}

	/** The session if one is open (or opening); never opens one. */
	async opened(): Promise<Session | undefined> {
		try {
			return await this.current?.session;
		} catch {
			return undefined;
		}
	}

	async close(): Promise<void> {
		const entry = this.current;
		this.current = undefined;
		if (!entry) return;
		try {
			await (await entry.session).close();
		} catch {
			// It never opened, or closing failed: nothing is left to release.
		}
	}
}
