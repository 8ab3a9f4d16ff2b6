/**
 * What getting in takes before any channel: the TCP socket (Nagle off), the known host keys and
 * the private key to offer.
 */
import { readFileSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ConnectConfig } from "ssh2";
import type { SshTarget } from "./client-config.js";
import type { SshConnectOptions } from "./connect-options.js";
import { unavailable } from "./errors.js";
import { type KnownKey, keysFor } from "./known-hosts.js";

const DEFAULT_IDENTITIES = ["id_ed25519", "id_ecdsa", "id_rsa"];

export function readKnownHosts(files: string[], name: string): KnownKey[] {
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

export function connectSocket(host: string, port: number, timeoutMs: number): Promise<Socket> {
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

export type AuthConfig = Pick<ConnectConfig, "privateKey" | "passphrase" | "agent">;

/** The key (or agent) to offer, and the file it came from (for messages). */
export function authConfig(
	opts: SshConnectOptions,
	target: SshTarget | undefined,
	label: string,
): { auth: AuthConfig; keyFile: string | undefined } {
	const agent = opts.agent === false ? undefined : (opts.agent ?? process.env.SSH_AUTH_SOCK);
	let privateKey = opts.privateKey;
	let keyFile: string | undefined;
	if (privateKey === undefined && opts.identityFile) {
		try {
			privateKey = readFileSync(opts.identityFile);
			keyFile = opts.identityFile;
		} catch (e) {
			throw unavailable(
				`Cannot read the identity file ${opts.identityFile} (${(e as Error).message}); pass an existing private key with --identity FILE.`,
				e,
			);
		}
	}
	// The config file's IdentityFile lines replace the defaults (as in ssh); keel offers the
	// first that exists (ssh tries each in turn).
	const configured = target?.identityFiles ?? [];
	const candidates =
		configured.length > 0 ? configured : DEFAULT_IDENTITIES.map((n) => join(homedir(), ".ssh", n));
	for (const file of privateKey === undefined ? candidates : []) {
		try {
			privateKey = readFileSync(file);
			keyFile = file;
			break;
		} catch {
			// try the next identity
		}
	}
	if (privateKey === undefined && !agent) {
		const named =
			configured.length > 0
				? ` (none of the IdentityFile entries in ${target?.configFile} exists: ${configured.join(", ")})`
				: "";
		throw unavailable(
			`No SSH key for ${label}${named}: pass a private key with --identity FILE, or start ssh-agent (SSH_AUTH_SOCK).`,
		);
	}
	return { auth: { privateKey, passphrase: opts.passphrase, agent }, keyFile };
}
