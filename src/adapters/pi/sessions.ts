/**
 * One keel Session per pi session. It is opened on the first tool call, for the
 * root, options and backend then in force; a call with a different one (a session switch to another
 * cwd, a new session with other flags or settings) closes the old one and opens a new one; pi's
 * session_shutdown closes it.
 *
 * The backend belongs to the session: it is opened with it (bwrap: its sandbox roots are the root
 * and the allow lists; ssh: the connection) and closed with it (Session.close closes its backend;
 * a backend whose session then fails to open is closed here). A backend setting that did not parse
 * opens nothing: every call gets its error, and this machine is never used in its place.
 */
import { resolve } from "node:path";
import type { Backend } from "../../backend/types.js";
import { KeelError } from "../../boundary/errors.js";
import { Session, type SessionOptions } from "../../session.js";
import type { BackendSetting } from "./config.js";

export type SessionFactory = (opts: SessionOptions) => Promise<Session>;

export interface SessionRequest extends Omit<SessionOptions, "backend" | "home"> {
	/** Where the tools run (default: this machine); part of what identifies the session. */
	backendSetting?: BackendSetting;
	/** Why keel's settings are unusable: every call is refused with it. */
	settingsError?: string;
}

/** The text every tool call gets while keel's settings cannot be used. */
export const badSettingsMessage = (error: string) =>
	`keel's settings are invalid: ${error}. keel runs no tool until the user fixes them ` +
	'(the --keel-* flags, KEEL_* variables, or "keel" in pi\'s settings.json) and starts a new session; ' +
	"retrying will not help, tell the user.";

/** The text every tool call gets while the backend setting cannot be used. */
export const badBackendMessage = (b: BackendSetting) =>
	`keel's backend setting is invalid: ${b.error}. keel runs no tool until the user fixes it ` +
	`(--keel-backend and its options, KEEL_BACKEND, or "keel" in pi's global settings.json) and starts ` +
	"a new session; retrying will not help, tell the user.";

export class SessionSlot {
	private current: { key: string; session: Promise<Session> } | undefined;

	constructor(private readonly create: SessionFactory = (o) => Session.create(o)) {}

	/** The session for `req`, opened once; concurrent first calls share it. */
	get(req: SessionRequest): Promise<Session> {
		const b = req.backendSetting;
		const key = JSON.stringify([
			req.root,
			req.profile,
			req.allow,
			req.allowRead,
			req.disabledTools,
			req.commandPrefix,
			req.checkpoints,
			req.diagnostics,
			req.settingsError,
			b && [b.spec, b.network, b.env, b.identity, b.insecureHostKey, b.error],
		]);
		if (this.current?.key === key) return this.current.session;
		void this.close();
		const session = this.open(req);
		const entry = { key, session };
		this.current = entry;
		// A failed open (a missing root, an unreachable host, a bad spec) is not cached: the next
		// call tries again.
		session.catch(() => {
			if (this.current === entry) this.current = undefined;
		});
		return session;
	}

	private async open(req: SessionRequest): Promise<Session> {
		const { backendSetting: b, settingsError, ...opts } = req;
		if (settingsError) throw new KeelError("INVALID_ARGS", badSettingsMessage(settingsError));
		if (b?.error) throw new KeelError("BACKEND_UNAVAILABLE", badBackendMessage(b));
		if (!b?.open) return this.create(opts);
		const root = resolve(opts.root ?? process.cwd());
		let backend: Backend;
		try {
			backend = await b.open(root, opts.allow ?? [], opts.allowRead ?? []);
		} catch (e) {
			if (e instanceof KeelError) throw e;
			throw new KeelError("BACKEND_UNAVAILABLE", `keel backend ${b.spec}: ${(e as Error)?.message ?? e}`, {
				cause: e,
			});
		}
		try {
			// `~` means the remote home on a remote backend (as in the CLI).
			const home =
				"remoteHome" in backend
					? await (backend as { remoteHome(): Promise<string> }).remoteHome()
					: undefined;
			return await this.create({ ...opts, root, backend, ...(home ? { home } : {}) });
		} catch (e) {
			await backend.close().catch(() => {});
			throw e;
		}
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
