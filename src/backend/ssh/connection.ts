/**
 * One SSH connection per backend, opened on first use and reopened on the next call after a drop.
 * It carries one SFTP channel (file bytes and names), the helpers (file facts and commits: live.ts)
 * and a small pool of job shells (commands and search). Host keys are checked against known_hosts;
 * skipping that takes an explicit `insecureHostKey`.
 */

import type { Socket } from "node:net";
import type { Client } from "ssh2";
import { backendFact } from "../../boundary/backend-facts.js";
import { KeelError } from "../../boundary/errors.js";
import { resolveSshTarget, type SshTarget } from "./client-config.js";
import type { ConnectPlace } from "./connect-errors.js";
import type { SshConnectOptions } from "./connect-options.js";
import { unavailable } from "./errors.js";
import { preferredHostKeyAlgorithms, verifyHostKey } from "./known-hosts.js";
import type { Live } from "./live.js";

export type { SshConnectOptions } from "./connect-options.js";
export type { Live, RemoteCaps } from "./live.js";

export class SshConnection {
	/** Where to connect, resolved once from the options and the ssh config file. */
	private readonly target: SshTarget | undefined;
	/** Why the target could not be resolved (a malformed config file): every call fails with it. */
	private readonly targetError: KeelError | undefined;
	private live: Live | undefined;
	private connecting: Promise<Live> | undefined;
	private closed = false;
	/** Commands running remotely: killed on close; after a drop, reaped once reconnected. */
	private readonly running = new Map<object, { live: Live; pgid: number; start?: string }>();
	private orphans: { pgid: number; start: string }[] = [];

	constructor(readonly opts: SshConnectOptions) {
		try {
			this.target = resolveSshTarget({
				host: opts.host,
				port: opts.port,
				username: opts.username,
				explicitKey: opts.privateKey !== undefined || opts.identityFile !== undefined,
				knownHostsFile: opts.knownHostsFile,
				sshConfigFile: opts.sshConfigFile,
			});
		} catch (e) {
			this.targetError =
				e instanceof KeelError
					? e
					: unavailable(`Cannot resolve the SSH target ${opts.host}: ${(e as Error).message}`, e);
		}
	}

	get port(): number {
		return this.target?.port ?? this.opts.port ?? 22;
	}

	get username(): string {
		return this.target?.username ?? this.opts.username ?? process.env.USER ?? "root";
	}

	/** The host connected to (the config file's HostName, else the name as given). */
	get host(): string {
		return this.target?.host ?? this.opts.host;
	}

	/**
	 * For messages: `user@host:port`, or `alias (user@host:port)` when the config file maps the
	 * name given to another host.
	 */
	get label(): string {
		const addr = `${this.username}@${this.host}:${this.port}`;
		return this.aliased ? `${this.opts.host} (${addr})` : addr;
	}

	get aliased(): boolean {
		return this.opts.host.toLowerCase() !== this.host;
	}

	/** ssh://user@host:port, or the alias with the address it stands for. */
	get where(): string {
		return this.aliased ? this.label : `ssh://${this.label}`;
	}

	/** The live connection, connecting first when there is none. */
	get(): Promise<Live> {
		if (this.targetError) return Promise.reject(this.targetError);
		if (this.closed) return Promise.reject(backendFact("ssh-closed"));
		if (this.live && !this.live.lost) return Promise.resolve(this.live);
		this.connecting ??= this.connect().finally(() => {
			this.connecting = undefined;
		});
		return this.connecting;
	}

	/**
	 * Run `fn` on the live connection. When the connection drops meanwhile, whatever `fn` failed
	 * with becomes one clear BACKEND_UNAVAILABLE; the next call reconnects.
	 */
	async use<T>(fn: (live: Live) => Promise<T>): Promise<T> {
		const live = await this.get();
		// Not Promise.race with live.whenLost: every race leaves a reaction on that promise, holding
		// the call's result (a file's bytes) until the connection ends.
		return new Promise<T>((resolve, reject) => {
			const stop = live.onLost(reject);
			let running: Promise<T>;
			try {
				running = fn(live);
			} catch (e) {
				stop();
				reject(live.lost ?? e);
				return;
			}
			running.then(
				(v) => {
					stop();
					resolve(v);
				},
				(e) => {
					stop();
					reject(live.lost ?? e);
				},
			);
		});
	}

	/** Record a running job's process group (see exec.ts); `undefined` forgets it. */
	trackJob(key: object, job: { live: Live; pgid: number; start?: string } | undefined): void {
		if (job) this.running.set(key, job);
		else this.running.delete(key);
	}

	async close(): Promise<void> {
		this.closed = true;
		const live = this.live ?? (await this.connecting?.catch(() => undefined));
		this.live = undefined;
		if (!live) return;
		// Closing the channels would leave running commands behind on the host: kill them first.
		const kills = [...this.running.values()]
			.filter((j) => j.live === live)
			.map((j) => live.helper.request("k_kill", String(j.pgid)).catch(() => {}));
		this.running.clear();
		await Promise.race([Promise.all(kills), new Promise((r) => setTimeout(r, 1000).unref())]);
		await new Promise<void>((resolve) => {
			if (live.lost) return resolve();
			live.client.once("close", () => resolve());
			live.client.end();
			setTimeout(() => {
				live.client.destroy();
				resolve();
			}, 1000).unref();
		});
	}

	lostError(why: string): KeelError {
		return backendFact("connection-lost", { host: this.where, reason: why });
	}

	private async connect(): Promise<Live> {
		const timeoutMs = this.opts.connectTimeoutMs ?? 15_000;
		const target = this.target as SshTarget; // get() refuses before connecting without one
		const name = target.knownHostsName;
		const files = target.knownHostsFiles;
		// ssh2 and keel's code for the handshake and the session's channels are loaded by the first
		// connection, not by importing keel.
		const [{ Client: SshClient }, { authConfig, connectSocket, readKnownHosts }, errors, { setUpLive }] =
			await Promise.all([
				import("ssh2"),
				import("./handshake.js"),
				import("./connect-errors.js"),
				import("./live.js"),
			]);
		const { connectError, hostKeyMessage } = errors;
		const known = this.opts.insecureHostKey ? [] : readKnownHosts(files, name);
		let hostKeyProblem: string | undefined;
		const client: Client = new SshClient();
		const { auth, keyFile } = authConfig(this.opts, this.target, this.label);
		const place: ConnectPlace = {
			given: this.opts.host,
			host: this.host,
			port: this.port,
			where: this.where,
			aliased: this.aliased,
			target: this.target,
			sshConfigFile: this.opts.sshConfigFile,
			keyFile,
		};
		let sock: Socket;
		try {
			sock = await connectSocket(this.host, this.port, timeoutMs);
		} catch (e) {
			throw connectError(place, e, undefined);
		}
		const algorithms = preferredHostKeyAlgorithms(known);
		try {
			await new Promise<void>((resolve, reject) => {
				client.once("ready", resolve);
				client.once("error", reject);
				client.once("close", () =>
					reject(new Error("the server closed the connection during the handshake")),
				);
				client.connect({
					sock,
					host: this.host,
					port: this.port,
					username: this.username,
					...auth,
					readyTimeout: timeoutMs,
					keepaliveInterval: 15_000,
					keepaliveCountMax: 3,
					...(algorithms ? { algorithms: { serverHostKey: algorithms as never } } : {}),
					hostVerifier: (blob: Buffer) => {
						if (this.opts.insecureHostKey) return true;
						const verdict = verifyHostKey(known, blob);
						if (verdict.kind === "ok") return true;
						hostKeyProblem = hostKeyMessage(place, verdict, blob, files, name);
						return false;
					},
				});
			});
		} catch (e) {
			client.removeAllListeners();
			client.on("error", () => {});
			client.destroy();
			throw connectError(place, e, hostKeyProblem);
		}
		client.removeAllListeners("ready");
		client.removeAllListeners("close");
		client.removeAllListeners("error");
		const live = await setUpLive(client, {
			opts: this.opts,
			label: this.label,
			where: this.where,
			lostError: (why) => this.lostError(why),
			dropped: (gone) => this.dropped(gone),
		});
		this.live = live;
		for (const o of this.orphans.splice(0)) {
			live.helper.request("k_reap", String(o.pgid), o.start).catch(() => {});
		}
		return live;
	}

	/** Forget a dropped connection; commands cut off from their shell run on: reap them later. */
	private dropped(live: Live): void {
		if (this.live === live) this.live = undefined;
		for (const [key, j] of this.running) {
			if (j.live !== live) continue;
			this.running.delete(key);
			if (j.start) this.orphans.push({ pgid: j.pgid, start: j.start });
		}
	}
}
