/**
 * One SSH connection per backend, opened on first use and reopened on the next call after a drop.
 * It carries one SFTP channel (file bytes and names), one helper shell (file facts and commits) and
 * a small pool of job shells (commands and search). Host keys are checked against known_hosts;
 * skipping that takes an explicit `insecureHostKey`.
 */
import { readFileSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { Client, type ConnectConfig, type SFTPWrapper } from "ssh2";
import { KeelError } from "../../boundary/errors.js";
import { unavailable } from "./errors.js";
import {
	blobKeyType,
	fingerprint,
	type HostKeyVerdict,
	hostLookupName,
	type KnownKey,
	keysFor,
	preferredHostKeyAlgorithms,
	verifyHostKey,
} from "./known-hosts.js";
import { HelperShell, JobShell, openChannel } from "./shell.js";

export interface SshConnectOptions {
	host: string;
	/** Default 22. */
	port?: number;
	/** Default: the local user name (as ssh does). */
	username?: string;
	/** A private key (OpenSSH/PEM text). */
	privateKey?: string | Buffer;
	/** A private key file (--identity FILE). Without either, ~/.ssh/id_ed25519, id_ecdsa, id_rsa. */
	identityFile?: string;
	passphrase?: string;
	/** ssh-agent socket; default SSH_AUTH_SOCK when set; false: never use an agent. */
	agent?: string | false;
	/** Default ~/.ssh/known_hosts (and /etc/ssh/ssh_known_hosts). */
	knownHostsFile?: string;
	/** Accept any host key (--insecure-host-key). Never the default. */
	insecureHostKey?: boolean;
	/** TCP connect plus SSH handshake and authentication; default 15 s. */
	connectTimeoutMs?: number;
	/** Replaces PATH in the remote shells (tests: a host without rg/fd). */
	remotePath?: string;
	/** Job shells run concurrently at most (commands and search); default 4. */
	maxJobShells?: number;
}

export interface RemoteCaps {
	/** The shell commands run in: bash, or sh when the host has no bash. */
	shell: string;
	home: string;
	/** The remote stat prints nanoseconds (GNU coreutils); otherwise whole seconds. */
	nsTimes: boolean;
	/** grep -P works (the search fallback's regex dialect closest to rg's). */
	grepP: boolean;
}

export interface Live {
	readonly client: Client;
	readonly sftp: SFTPWrapper;
	readonly helper: HelperShell;
	readonly caps: RemoteCaps;
	/** Set once the connection is gone; every later use reconnects. */
	lost?: KeelError;
	/** Rejects with `lost` when the connection goes: requests in flight may never be answered. */
	readonly whenLost: Promise<never>;
	acquireShell(): Promise<JobShell>;
}

const DEFAULT_IDENTITIES = ["id_ed25519", "id_ecdsa", "id_rsa"];

function readKnownHosts(files: string[], name: string): KnownKey[] {
	const out: KnownKey[] = [];
	for (const file of files) {
		let text: string;
		try {
			text = readFileSync(file, "utf8");
		} catch {
			continue;
		}
		out.push(...keysFor(text, name, file));
	}
	return out;
}

function connectSocket(host: string, port: number, timeoutMs: number): Promise<Socket> {
	return new Promise((resolve, reject) => {
		const sock = netConnect({ host, port });
		const timer = setTimeout(() => {
			sock.destroy();
			reject(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: "ETIMEDOUT" }));
		}, timeoutMs);
		sock.once("connect", () => {
			clearTimeout(timer);
			// Nagle would hold back each small request ~40 ms waiting for the previous ACK.
			sock.setNoDelay(true);
			resolve(sock);
		});
		sock.once("error", (e) => {
			clearTimeout(timer);
			reject(e);
		});
	});
}

export class SshConnection {
	readonly port: number;
	readonly username: string;
	private live: Live | undefined;
	private connecting: Promise<Live> | undefined;
	private closed = false;
	/** Commands running remotely: killed on close; after a drop, reaped once reconnected. */
	private readonly running = new Map<object, { live: Live; pgid: number; start?: string }>();
	private orphans: { pgid: number; start: string }[] = [];

	constructor(private readonly opts: SshConnectOptions) {
		this.port = opts.port ?? 22;
		this.username = opts.username ?? process.env.USER ?? "root";
	}

	/** user@host:port, for messages. */
	get label(): string {
		return `${this.username}@${this.opts.host}:${this.port}`;
	}

	/** The live connection, connecting first when there is none. */
	get(): Promise<Live> {
		if (this.closed) return Promise.reject(unavailable("This SSH backend is closed; start a new session."));
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
		try {
			return await Promise.race([fn(live), live.whenLost]);
		} catch (e) {
			if (live.lost) throw live.lost;
			throw e;
		}
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

	private lostError(why: string): KeelError {
		return unavailable(
			`The SSH connection to ${this.label} was lost (${why}); an operation in flight may or may not have taken effect (a write is all or nothing): check before retrying. The next call reconnects.`,
		);
	}

	private authConfig(): Pick<ConnectConfig, "privateKey" | "passphrase" | "agent"> {
		const agent = this.opts.agent === false ? undefined : (this.opts.agent ?? process.env.SSH_AUTH_SOCK);
		let privateKey = this.opts.privateKey;
		if (privateKey === undefined && this.opts.identityFile) {
			try {
				privateKey = readFileSync(this.opts.identityFile);
			} catch (e) {
				throw unavailable(
					`Cannot read the identity file ${this.opts.identityFile} (${(e as Error).message}); pass an existing private key with --identity FILE.`,
					e,
				);
			}
		}
		if (privateKey === undefined) {
			for (const name of DEFAULT_IDENTITIES) {
				try {
					privateKey = readFileSync(join(homedir(), ".ssh", name));
					break;
				} catch {
					// try the next default identity
				}
			}
		}
		if (privateKey === undefined && !agent) {
			throw unavailable(
				`No SSH key for ${this.label}: pass a private key with --identity FILE, or start ssh-agent (SSH_AUTH_SOCK).`,
			);
		}
		return { privateKey, passphrase: this.opts.passphrase, agent };
	}

	private hostKeyMessage(verdict: HostKeyVerdict, blob: Buffer, files: string[]): string {
		const name = hostLookupName(this.opts.host, this.port);
		const got = `${blobKeyType(blob)} key ${fingerprint(blob)}`;
		switch (verdict.kind) {
			case "unknown":
				return `The host key of ${name} is not in ${files.join(" or ")} (the server offered ${got}). Add it after checking the fingerprint (ssh-keyscan -p ${this.port} ${this.opts.host} >> ~/.ssh/known_hosts), or pass --insecure-host-key to skip host key checking.`;
			case "revoked":
				return `The host key of ${name} (${got}) is marked @revoked in ${verdict.entry.file}:${verdict.entry.line}; refusing to connect.`;
			case "mismatch":
			case "other-type": {
				const where = verdict.entries.map((e) => `${e.file}:${e.line}`).join(", ");
				return `HOST KEY MISMATCH for ${name}: the server offered ${got}, which is not the key recorded in ${where}. Someone may be intercepting the connection, or the host was reinstalled; if you trust the new key, remove the old one (ssh-keygen -R '${name}') and add the new one.`;
			}
			default:
				return `The host key of ${name} was refused.`;
		}
	}

	private connectError(e: unknown, hostKeyProblem: string | undefined): KeelError {
		if (e instanceof KeelError) return e;
		if (hostKeyProblem) return unavailable(hostKeyProblem, e);
		const err = e as NodeJS.ErrnoException & { level?: string };
		const where = `ssh://${this.label}`;
		switch (err.code) {
			case "ECONNREFUSED":
				return unavailable(
					`Cannot connect to ${where}: connection refused; check the host and port, and that sshd runs there.`,
					e,
				);
			case "ETIMEDOUT":
				return unavailable(
					`Cannot connect to ${where}: ${err.message}; check the host, port and network.`,
					e,
				);
			case "ENOTFOUND":
			case "EAI_AGAIN":
				return unavailable(
					`Cannot connect to ${where}: host ${this.opts.host} not found; check the host name.`,
					e,
				);
			case "EHOSTUNREACH":
			case "ENETUNREACH":
				return unavailable(
					`Cannot connect to ${where}: the host is unreachable; check the address and network.`,
					e,
				);
		}
		if (err.level === "client-authentication") {
			return unavailable(
				`Authentication to ${where} failed: the server refused the key(s) offered${this.opts.identityFile ? ` (${this.opts.identityFile})` : ""}. Pass the right key with --identity FILE, or add its public key to the user's authorized_keys on the host.`,
				e,
			);
		}
		if (err.level === "client-timeout") {
			return unavailable(
				`Cannot connect to ${where}: the SSH handshake timed out; check that the port speaks SSH.`,
				e,
			);
		}
		return unavailable(`Cannot connect to ${where}: ${err.message}.`, e);
	}

	private async connect(): Promise<Live> {
		const timeoutMs = this.opts.connectTimeoutMs ?? 15_000;
		const name = hostLookupName(this.opts.host, this.port);
		const files = this.opts.knownHostsFile
			? [this.opts.knownHostsFile]
			: [join(homedir(), ".ssh", "known_hosts"), "/etc/ssh/ssh_known_hosts"];
		const known = this.opts.insecureHostKey ? [] : readKnownHosts(files, name);
		let hostKeyProblem: string | undefined;
		const client = new Client();
		const auth = this.authConfig();
		let sock: Socket;
		try {
			sock = await connectSocket(this.opts.host, this.port, timeoutMs);
		} catch (e) {
			throw this.connectError(e, undefined);
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
					host: this.opts.host,
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
						hostKeyProblem = this.hostKeyMessage(verdict, blob, files);
						return false;
					},
				});
			});
		} catch (e) {
			client.removeAllListeners();
			client.on("error", () => {});
			client.destroy();
			throw this.connectError(e, hostKeyProblem);
		}
		client.removeAllListeners("ready");
		client.removeAllListeners("close");
		client.removeAllListeners("error");
		return this.setUp(client);
	}

	/** Open SFTP and the helper shell, and check the remote tools keel relies on. */
	private async setUp(client: Client): Promise<Live> {
		const maxShells = this.opts.maxJobShells ?? 4;
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
		const live: Live = {
			client,
			whenLost,
			sftp: undefined as unknown as SFTPWrapper,
			helper: undefined as unknown as HelperShell,
			caps: { shell: "sh", home: "/", nsTimes: false, grepP: false },
			acquireShell: async () => {
				if (live.lost) throw live.lost;
				for (let s = idle.pop(); s; s = idle.pop()) if (!s.dead) return s;
				const alive = shells.filter((s) => !s.dead);
				shells.splice(0, shells.length, ...alive);
				if (shells.length >= maxShells) {
					return new Promise<JobShell>((resolve, reject) => waiters.push({ resolve, reject }));
				}
				const shell = new JobShell(await openChannel(client), this.opts.remotePath, onIdle);
				shells.push(shell);
				return shell;
			},
		};
		const markLost = (why: string) => {
			if (live.lost) return;
			live.lost = this.lostError(why);
			if (this.live === live) this.live = undefined;
			for (const w of waiters.splice(0)) w.reject(live.lost);
			// Commands cut off from their shell run on remotely: reap them after reconnecting.
			for (const [key, j] of this.running) {
				if (j.live !== live) continue;
				this.running.delete(key);
				if (j.start) this.orphans.push({ pgid: j.pgid, start: j.start });
			}
			rejectLost(live.lost);
			client.destroy();
		};
		client.on("error", (e: Error) => markLost(e.message));
		client.on("close", () => markLost("connection closed"));
		try {
			const [sftp, chan] = await Promise.all([
				new Promise<SFTPWrapper>((resolve, reject) =>
					client.sftp((err, s) => (err ? reject(err) : resolve(s))),
				),
				openChannel(client),
			]);
			const helper = new HelperShell(chan, this.opts.remotePath);
			// Without SFTP or the helper the backend cannot work: treat either closing as a drop.
			sftp.on("close", () => markLost("the SFTP channel closed"));
			chan.on("close", () => markLost("the helper shell exited"));
			const caps = await helper.request("k_caps");
			const missing = [...caps.out.matchAll(/^missing (\S+)$/gm)].map((m) => m[1]);
			if (missing.length > 0) {
				throw unavailable(
					`The host ${this.opts.host} lacks ${missing.join(", ")}, which keel's ssh backend runs there (GNU coreutils, util-linux, findutils, grep); install them on the host.`,
				);
			}
			Object.assign(live, {
				sftp,
				helper,
				caps: {
					shell: /^shell (.*)$/m.exec(caps.out)?.[1] || "sh",
					home: /^home (.*)$/m.exec(caps.out)?.[1] || "/",
					nsTimes: /^fmt .*%\.9Y/m.test(caps.out),
					grepP: /^grep-P yes$/m.test(caps.out),
				},
			});
		} catch (e) {
			client.destroy();
			if (e instanceof KeelError) throw e;
			throw unavailable(
				`Connected to ssh://${this.label}, but could not start SFTP and a shell there: ${(e as Error).message}. Check that the account has a working shell, the sftp subsystem is enabled, and the shell's rc files print nothing.`,
				e,
			);
		}
		if (live.lost) throw live.lost;
		this.live = live;
		for (const o of this.orphans.splice(0)) {
			live.helper.request("k_reap", String(o.pgid), o.start).catch(() => {});
		}
		return live;
	}
}
