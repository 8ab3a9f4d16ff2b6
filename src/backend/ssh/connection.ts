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
import { resolveSshTarget, type SshTarget } from "./client-config.js";
import { unavailable } from "./errors.js";
import {
	blobKeyType,
	fingerprint,
	type HostKeyVerdict,
	type KnownKey,
	keysFor,
	preferredHostKeyAlgorithms,
	verifyHostKey,
} from "./known-hosts.js";
import { channelPipe, HelperShell, JobShell, openChannel } from "./shell.js";

export interface SshConnectOptions {
	/** A host name, address or ~/.ssh/config alias (`Host` patterns match it as given). */
	host: string;
	/** Default: the config file's Port, else 22. */
	port?: number;
	/** Default: the config file's User, else the local user name (as ssh does). */
	username?: string;
	/** A private key (OpenSSH/PEM text). */
	privateKey?: string | Buffer;
	/**
	 * A private key file (--identity FILE). Without either: the config file's first existing
	 * IdentityFile, else ~/.ssh/id_ed25519, id_ecdsa, id_rsa.
	 */
	identityFile?: string;
	passphrase?: string;
	/** ssh-agent socket; default SSH_AUTH_SOCK when set; false: never use an agent. */
	agent?: string | false;
	/**
	 * Default: the config file's UserKnownHostsFile and GlobalKnownHostsFile, else
	 * ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts.
	 */
	knownHostsFile?: string;
	/**
	 * OpenSSH client configuration for HostName, User, Port, IdentityFile, HostKeyAlias and
	 * User/GlobalKnownHostsFile (see client-config.ts); explicit options win over it. Default
	 * ~/.ssh/config (missing or unreadable: none); false: read none.
	 */
	sshConfigFile?: string | false;
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

	constructor(private readonly opts: SshConnectOptions) {
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

	private get aliased(): boolean {
		return this.opts.host.toLowerCase() !== this.host;
	}

	/** ssh://user@host:port, or the alias with the address it stands for. */
	private get where(): string {
		return this.aliased ? this.label : `ssh://${this.label}`;
	}

	/** Directives of the config file that keel ignores but that may explain a failure. */
	private withNotes(message: string): string {
		const notes = this.target?.notes ?? [];
		return notes.length > 0 ? `${message} Note: ${notes.join("; ")}.` : message;
	}

	/** The live connection, connecting first when there is none. */
	get(): Promise<Live> {
		if (this.targetError) return Promise.reject(this.targetError);
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
			`The SSH connection to ${this.where} was lost (${why}); an operation in flight may or may not have taken effect (a write is all or nothing): check before retrying. The next call reconnects.`,
		);
	}

	/** The key file offered in the last connection attempt, for messages. */
	private keyFile: string | undefined;

	private authConfig(): Pick<ConnectConfig, "privateKey" | "passphrase" | "agent"> {
		const agent = this.opts.agent === false ? undefined : (this.opts.agent ?? process.env.SSH_AUTH_SOCK);
		let privateKey = this.opts.privateKey;
		this.keyFile = undefined;
		if (privateKey === undefined && this.opts.identityFile) {
			try {
				privateKey = readFileSync(this.opts.identityFile);
				this.keyFile = this.opts.identityFile;
			} catch (e) {
				throw unavailable(
					`Cannot read the identity file ${this.opts.identityFile} (${(e as Error).message}); pass an existing private key with --identity FILE.`,
					e,
				);
			}
		}
		// The config file's IdentityFile lines replace the defaults (as in ssh); keel offers the
		// first that exists (ssh tries each in turn).
		const configured = this.target?.identityFiles ?? [];
		const candidates =
			configured.length > 0 ? configured : DEFAULT_IDENTITIES.map((n) => join(homedir(), ".ssh", n));
		for (const file of privateKey === undefined ? candidates : []) {
			try {
				privateKey = readFileSync(file);
				this.keyFile = file;
				break;
			} catch {
				// try the next identity
			}
		}
		if (privateKey === undefined && !agent) {
			const named =
				configured.length > 0
					? ` (none of the IdentityFile entries in ${this.target?.configFile} exists: ${configured.join(", ")})`
					: "";
			throw unavailable(
				`No SSH key for ${this.label}${named}: pass a private key with --identity FILE, or start ssh-agent (SSH_AUTH_SOCK).`,
			);
		}
		return { privateKey, passphrase: this.opts.passphrase, agent };
	}

	private hostKeyMessage(verdict: HostKeyVerdict, blob: Buffer, files: string[], name: string): string {
		const got = `${blobKeyType(blob)} key ${fingerprint(blob)}`;
		const alias = this.target?.hostKeyAlias;
		// The name as given, with the known_hosts name it was looked up under.
		const shown = this.aliased || alias ? `${this.opts.host} (${name})` : name;
		switch (verdict.kind) {
			case "unknown": {
				const into = files[0] ?? "~/.ssh/known_hosts";
				const scan = `ssh-keyscan -p ${this.port} ${this.host}${alias ? ` | sed 's/^[^ ]*/${alias}/'` : ""} >> ${into}`;
				return this.withNotes(
					`The host key of ${shown} is not in ${files.join(" or ") || "any known_hosts file"} (the server offered ${got}). Add it after checking the fingerprint (${scan}), or pass --insecure-host-key to skip host key checking.`,
				);
			}
			case "revoked":
				return `The host key of ${shown} (${got}) is marked @revoked in ${verdict.entry.file}:${verdict.entry.line}; refusing to connect.`;
			case "mismatch":
			case "other-type": {
				const where = verdict.entries.map((e) => `${e.file}:${e.line}`).join(", ");
				return this.withNotes(
					`HOST KEY MISMATCH for ${shown}: the server offered ${got}, which is not the key recorded in ${where}. Someone may be intercepting the connection, or the host was reinstalled; if you trust the new key, remove the old one (ssh-keygen -R '${name}') and add the new one.`,
				);
			}
			default:
				return `The host key of ${name} was refused.`;
		}
	}

	private connectError(e: unknown, hostKeyProblem: string | undefined): KeelError {
		if (e instanceof KeelError) return e;
		if (hostKeyProblem) return unavailable(hostKeyProblem, e);
		const err = e as NodeJS.ErrnoException & { level?: string };
		const plain = this.plainConnectError(err);
		return unavailable(this.withNotes(plain), e);
	}

	private plainConnectError(err: NodeJS.ErrnoException & { level?: string }): string {
		const where = this.where;
		switch (err.code) {
			case "ECONNREFUSED":
				return `Cannot connect to ${where}: connection refused; check the host and port, and that sshd runs there.`;
			case "ETIMEDOUT":
				return `Cannot connect to ${where}: ${err.message}; check the host, port and network.`;
			case "ENOTFOUND":
			case "EAI_AGAIN": {
				const cfg = this.opts.sshConfigFile ?? "~/.ssh/config";
				const hint =
					this.aliased || cfg === false ? "" : ` (or give it a Host entry with a HostName in ${cfg})`;
				return `Cannot connect to ${where}: host ${this.host} not found; check the host name${hint}.`;
			}
			case "EHOSTUNREACH":
			case "ENETUNREACH":
				return `Cannot connect to ${where}: the host is unreachable; check the address and network.`;
		}
		if (err.level === "client-authentication") {
			return `Authentication to ${where} failed: the server refused the key(s) offered${this.keyFile ? ` (${this.keyFile})` : ""}. Pass the right key with --identity FILE, or add its public key to the user's authorized_keys on the host.`;
		}
		if (err.level === "client-timeout") {
			return `Cannot connect to ${where}: the SSH handshake timed out; check that the port speaks SSH.`;
		}
		return `Cannot connect to ${where}: ${err.message}.`;
	}

	private async connect(): Promise<Live> {
		const timeoutMs = this.opts.connectTimeoutMs ?? 15_000;
		const target = this.target as SshTarget; // get() refuses before connecting without one
		const name = target.knownHostsName;
		const files = target.knownHostsFiles;
		const known = this.opts.insecureHostKey ? [] : readKnownHosts(files, name);
		let hostKeyProblem: string | undefined;
		const client = new Client();
		const auth = this.authConfig();
		let sock: Socket;
		try {
			sock = await connectSocket(this.host, this.port, timeoutMs);
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
						hostKeyProblem = this.hostKeyMessage(verdict, blob, files, name);
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
				const shell = new JobShell(channelPipe(await openChannel(client)), this.opts.remotePath, onIdle);
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
			const helper = new HelperShell(channelPipe(chan), this.opts.remotePath);
			// Without SFTP or the helper the backend cannot work: treat either closing as a drop.
			sftp.on("close", () => markLost("the SFTP channel closed"));
			chan.on("close", () => markLost("the helper shell exited"));
			const caps = await helper.request("k_caps");
			const missing = [...caps.out.matchAll(/^missing (\S+)$/gm)].map((m) => m[1]);
			if (missing.length > 0) {
				throw unavailable(
					`The host ${this.label} lacks ${missing.join(", ")}, which keel's ssh backend runs there (GNU coreutils, util-linux, findutils, grep); install them on the host.`,
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
				`Connected to ${this.where}, but could not start SFTP and a shell there: ${(e as Error).message}. Check that the account has a working shell, the sftp subsystem is enabled, and the shell's rc files print nothing.`,
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
