/**
 * One live connection's channels: SFTP, the shell helper, the fast file helper (python3, when the
 * host has it) and the pool of job shells. A channel SFTP or a helper needs closing counts as the
 * connection dropping: every request in flight fails, and the next call reconnects.
 */

import type { Client, ClientChannel, SFTPWrapper } from "ssh2";
import { backendFact } from "../../boundary/backend-facts.js";
import { KeelError } from "../../boundary/errors.js";
import { channelPipe, openChannel } from "./channel.js";
import type { SshConnectOptions } from "./connect-options.js";
import { PeekCache } from "./peek.js";
import { PY_FUNCS, pyInit, pyRequest } from "./remote-py.js";
import type { CommandRunner } from "./run-client.js";
import { type HelperReply, HelperShell, JobShell } from "./shell.js";

export interface RemoteCaps {
	/** The shell commands run in: bash, or sh when the host has no bash. */
	shell: string;
	home: string;
	/** The remote stat prints nanoseconds (GNU coreutils, or the fast helper); else whole seconds. */
	nsTimes: boolean;
	/** grep -P works (the search fallback's regex dialect closest to rg's). */
	grepP: boolean;
}

export interface Live {
	readonly client: Client;
	readonly sftp: SFTPWrapper;
	readonly helper: HelperShell;
	/** The fast file helper (remote-py.ts); undefined on a host without python3. */
	readonly py: HelperShell | undefined;
	readonly caps: RemoteCaps;
	/** What k_look brought along with a resolution, for the stat and read that follow (peek.ts). */
	readonly peeks: PeekCache;
	/** The remote PATH override (tests), for channels opened later. */
	readonly remotePath: string | undefined;
	/** The command runner (run-exec.ts), once started; `current` set when it is ready. */
	runner?: { promise: Promise<CommandRunner | undefined>; current: CommandRunner | undefined };
	/** Call tags of commands a dead runner left: the next runner kills what carries them. */
	readonly runnerOrphans: string[];
	/** Set once the connection is gone; every later use reconnects. */
	lost?: KeelError;
	/** Rejects with `lost` when the connection goes: requests in flight may never be answered. */
	readonly whenLost: Promise<never>;
	/**
	 * Call `fn` with `lost` when the connection goes (at once if it is gone); the function returned
	 * unsubscribes. Per call, where a reaction on whenLost would stay until the connection ends
	 * (with whatever the call's result holds).
	 */
	onLost(fn: (e: KeelError) => void): () => void;
	acquireShell(): Promise<JobShell>;
}

/** A file helper request: the fast helper when there is one and it knows `fn`, else the shell. */
export function ask(live: Live, fn: string, ...args: string[]): Promise<HelperReply> {
	return (live.py && PY_FUNCS.has(fn) ? live.py : live.helper).request(fn, ...args);
}

/** What the channels need from the SshConnection that owns them. */
export interface LiveOwner {
	readonly opts: SshConnectOptions;
	readonly label: string;
	readonly where: string;
	lostError(why: string): KeelError;
	/** The connection dropped: forget it; its running commands are reaped after a reconnect. */
	dropped(live: Live): void;
}

/** Start the fast helper; undefined when the host has no python3 (the channel exits). */
async function startPy(
	client: Client,
	remotePath: string | undefined,
): Promise<{ py: HelperShell; chan: ClientChannel } | undefined> {
	const chan = await openChannel(client);
	const py = new HelperShell(channelPipe(chan), remotePath, { init: pyInit(remotePath), encode: pyRequest });
	try {
		const probe = await py.request("k_lstat", "/");
		if (probe.status === 0) return { py, chan };
	} catch {
		// no python3 (exit 127), or it failed to start: the shell helper does the work
	}
	py.close();
	return undefined;
}

/** Open SFTP and the helpers, and check the remote tools keel relies on. */
export async function setUpLive(client: Client, owner: LiveOwner): Promise<Live> {
	const maxShells = owner.opts.maxJobShells ?? 4;
	const remotePath = owner.opts.remotePath;
	const shells: JobShell[] = [];
	const idle: JobShell[] = [];
	const waiters: { resolve: (s: JobShell) => void; reject: (e: Error) => void }[] = [];
	const onIdle = (s: JobShell) => {
		if (s.dead) return;
		const next = waiters.shift();
		if (next) next.resolve(s);
		else idle.push(s);
	};
	let rejectLost: (e: KeelError) => void = () => {};
	const whenLost = new Promise<never>((_, reject) => {
		rejectLost = reject;
	});
	whenLost.catch(() => {});
	const lostListeners = new Set<(e: KeelError) => void>();
	const live: Live = {
		client,
		whenLost,
		onLost: (fn) => {
			if (live.lost) {
				fn(live.lost);
				return () => {};
			}
			lostListeners.add(fn);
			return () => lostListeners.delete(fn);
		},
		sftp: undefined as unknown as SFTPWrapper,
		helper: undefined as unknown as HelperShell,
		py: undefined,
		peeks: new PeekCache(),
		remotePath,
		runnerOrphans: [],
		caps: { shell: "sh", home: "/", nsTimes: false, grepP: false },
		acquireShell: async () => {
			if (live.lost) throw live.lost;
			for (let s = idle.pop(); s; s = idle.pop()) if (!s.dead) return s;
			const alive = shells.filter((s) => !s.dead);
			shells.splice(0, shells.length, ...alive);
			if (shells.length >= maxShells) {
				return new Promise<JobShell>((resolve, reject) => waiters.push({ resolve, reject }));
			}
			const shell = new JobShell(channelPipe(await openChannel(client)), remotePath, onIdle);
			shells.push(shell);
			return shell;
		},
	};
	const markLost = (why: string) => {
		if (live.lost) return;
		live.lost = owner.lostError(why);
		owner.dropped(live);
		for (const w of waiters.splice(0)) w.reject(live.lost);
		rejectLost(live.lost);
		for (const fn of [...lostListeners]) fn(live.lost);
		lostListeners.clear();
		client.destroy();
	};
	client.on("error", (e: Error) => markLost(e.message));
	client.on("close", () => markLost("connection closed"));
	try {
		const [sftp, chan, fast] = await Promise.all([
			new Promise<SFTPWrapper>((resolve, reject) =>
				client.sftp((err, s) => (err ? reject(err) : resolve(s))),
			),
			openChannel(client),
			startPy(client, remotePath),
		]);
		const helper = new HelperShell(channelPipe(chan), remotePath);
		// Without SFTP or the helpers the backend cannot work: treat either closing as a drop.
		sftp.on("close", () => markLost("the SFTP channel closed"));
		chan.on("close", () => markLost("the helper shell exited"));
		fast?.chan.on("close", () => markLost("the file helper exited"));
		const py = fast?.py;
		const caps = await helper.request("k_caps");
		const missing = [...caps.out.matchAll(/^missing (\S+)$/gm)].map((m) => m[1]);
		if (missing.length > 0) {
			throw backendFact("host-lacks-programs", { host: owner.label, programs: missing });
		}
		Object.assign(live, {
			sftp,
			helper,
			py,
			caps: {
				shell: /^shell (.*)$/m.exec(caps.out)?.[1] || "sh",
				home: /^home (.*)$/m.exec(caps.out)?.[1] || "/",
				// The fast helper prints nanoseconds whatever the host's stat can do.
				nsTimes: py !== undefined || /^fmt .*%\.9Y/m.test(caps.out),
				grepP: /^grep-P yes$/m.test(caps.out),
			},
		});
	} catch (e) {
		client.destroy();
		if (e instanceof KeelError) throw e;
		throw backendFact(
			"ssh-session-not-started",
			{ host: owner.where, reason: (e as Error).message },
			{ cause: e },
		);
	}
	if (live.lost) throw live.lost;
	return live;
}
