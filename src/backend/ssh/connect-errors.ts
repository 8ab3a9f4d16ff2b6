/**
 * The messages of a failed connection: host key trouble, refused keys, unreachable hosts. Each
 * names the host as the user gave it (and what it resolved to) and the fix.
 */
import { KeelError } from "../../boundary/errors.js";
import type { SshTarget } from "./client-config.js";
import { unavailable } from "./errors.js";
import { blobKeyType, fingerprint, type HostKeyVerdict } from "./known-hosts.js";

/** The names a message needs, from the SshConnection. */
export interface ConnectPlace {
	/** The host as given (an alias, maybe). */
	readonly given: string;
	/** The host connected to (the config file's HostName, else the name given). */
	readonly host: string;
	readonly port: number;
	/** ssh://user@host:port, or the alias with the address it stands for. */
	readonly where: string;
	/** The config file maps the name given to another host. */
	readonly aliased: boolean;
	readonly target: SshTarget | undefined;
	readonly sshConfigFile: string | false | undefined;
	/** The key file offered in the last attempt. */
	readonly keyFile: string | undefined;
}

/** Directives of the config file that keel ignores but that may explain a failure. */
export function withNotes(place: ConnectPlace, message: string): string {
	const notes = place.target?.notes ?? [];
	return notes.length > 0 ? `${message} Note: ${notes.join("; ")}.` : message;
}

export function hostKeyMessage(
	place: ConnectPlace,
	verdict: HostKeyVerdict,
	blob: Buffer,
	files: string[],
	name: string,
): string {
	const got = `${blobKeyType(blob)} key ${fingerprint(blob)}`;
	const alias = place.target?.hostKeyAlias;
	// The name as given, with the known_hosts name it was looked up under.
	const shown = place.aliased || alias ? `${place.given} (${name})` : name;
	switch (verdict.kind) {
		case "unknown": {
			const into = files[0] ?? "~/.ssh/known_hosts";
			const scan = `ssh-keyscan -p ${place.port} ${place.host}${alias ? ` | sed 's/^[^ ]*/${alias}/'` : ""} >> ${into}`;
			return withNotes(
				place,
				`The host key of ${shown} is not in ${files.join(" or ") || "any known_hosts file"} (the server offered ${got}). Add it after checking the fingerprint (${scan}), or pass --insecure-host-key to skip host key checking.`,
			);
		}
		case "revoked":
			return `The host key of ${shown} (${got}) is marked @revoked in ${verdict.entry.file}:${verdict.entry.line}; refusing to connect.`;
		case "mismatch":
		case "other-type": {
			const where = verdict.entries.map((e) => `${e.file}:${e.line}`).join(", ");
			return withNotes(
				place,
				`HOST KEY MISMATCH for ${shown}: the server offered ${got}, which is not the key recorded in ${where}. Someone may be intercepting the connection, or the host was reinstalled; if you trust the new key, remove the old one (ssh-keygen -R '${name}') and add the new one.`,
			);
		}
		default:
			return `The host key of ${name} was refused.`;
	}
}

export function connectError(place: ConnectPlace, e: unknown, hostKeyProblem: string | undefined): KeelError {
	if (e instanceof KeelError) return e;
	if (hostKeyProblem) return unavailable(hostKeyProblem, e);
	const err = e as NodeJS.ErrnoException & { level?: string };
	return unavailable(withNotes(place, plainConnectError(place, err)), e);
}

function plainConnectError(place: ConnectPlace, err: NodeJS.ErrnoException & { level?: string }): string {
	const where = place.where;
	switch (err.code) {
		case "ECONNREFUSED":
			return `Cannot connect to ${where}: connection refused; check the host and port, and that sshd runs there.`;
		case "ETIMEDOUT":
			return `Cannot connect to ${where}: ${err.message}; check the host, port and network.`;
		case "ENOTFOUND":
		case "EAI_AGAIN": {
			const cfg = place.sshConfigFile ?? "~/.ssh/config";
			const hint =
				place.aliased || cfg === false ? "" : ` (or give it a Host entry with a HostName in ${cfg})`;
			return `Cannot connect to ${where}: host ${place.host} not found; check the host name${hint}.`;
		}
		case "EHOSTUNREACH":
		case "ENETUNREACH":
			return `Cannot connect to ${where}: the host is unreachable; check the address and network.`;
	}
	if (err.level === "client-authentication") {
		return `Authentication to ${where} failed: the server refused the key(s) offered${place.keyFile ? ` (${place.keyFile})` : ""}. Pass the right key with --identity FILE, or add its public key to the user's authorized_keys on the host.`;
	}
	if (err.level === "client-timeout") {
		return `Cannot connect to ${where}: the SSH handshake timed out; check that the port speaks SSH.`;
	}
	return `Cannot connect to ${where}: ${err.message}.`;
}
