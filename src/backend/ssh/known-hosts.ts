/**
 * known_hosts, read the way OpenSSH reads it: `host`, `[host]:port`, comma lists, `*`/`?` wildcards,
 * `!` negation, hashed `|1|salt|hash` entries and the `@revoked` marker (`@cert-authority` lines are
 * skipped: keel does not verify host certificates). A host is looked up as `host` on port 22 and
 * `[host]:port` otherwise.
 */
import { createHash, createHmac } from "node:crypto";

export interface KnownKey {
	file: string;
	line: number;
	type: string;
	/** The key blob, base64 (as written in the file). */
	key: string;
	revoked: boolean;
}

export type HostKeyVerdict =
	| { kind: "ok"; entry: KnownKey }
	| { kind: "revoked"; entry: KnownKey }
	/** The host is known with a key of the same type that is not this one. */
	| { kind: "mismatch"; entries: KnownKey[] }
	/** The host is known, but only with keys of other types. */
	| { kind: "other-type"; entries: KnownKey[] }
	| { kind: "unknown" };

/** How OpenSSH names a host in known_hosts. */
export function hostLookupName(host: string, port: number): string {
	return port === 22 ? host : `[${host}]:${port}`;
}

function wildcardMatch(pattern: string, text: string): boolean {
	const re = pattern
		.replace(/[.+^${}()|[\]\\]/g, "\\$&")
		.replace(/\*/g, ".*")
		.replace(/\?/g, ".");
	return new RegExp(`^${re}$`, "i").test(text);
}

function hashedMatch(entry: string, name: string): boolean {
	const [, magic, salt, hash] = entry.split("|");
	if (magic !== "1" || !salt || !hash) return false;
	const mac = createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64");
	return mac === hash;
}

/** Does a host field (comma list, wildcards, negations, or one hashed entry) name `name`? */
export function hostFieldMatches(field: string, name: string): boolean {
	if (field.startsWith("|")) return hashedMatch(field, name);
	let positive = false;
	for (const raw of field.split(",")) {
		const negated = raw.startsWith("!");
		const pattern = negated ? raw.slice(1) : raw;
		if (!wildcardMatch(pattern, name)) continue;
		if (negated) return false;
		positive = true;
	}
	return positive;
}

/** Keys for `name` in the text of one known_hosts file. */
export function keysFor(text: string, name: string, file: string): KnownKey[] {
	const out: KnownKey[] = [];
	const lines = text.split("\n");
	for (let i = 0; i < lines.length; i++) {
		const fields = lines[i].trim().split(/\s+/);
		if (fields[0] === "" || fields[0].startsWith("#")) continue;
		let revoked = false;
		if (fields[0].startsWith("@")) {
			if (fields[0] !== "@revoked") continue;
			revoked = true;
			fields.shift();
		}
		const [hosts, type, key] = fields;
		if (!hosts || !type || !key || !hostFieldMatches(hosts, name)) continue;
		out.push({ file, line: i + 1, type, key, revoked });
	}
	return out;
}

/** The key type named inside an SSH public key blob ("ssh-ed25519", ...). */
export function blobKeyType(blob: Buffer): string {
	if (blob.length < 4) return "unknown";
	const n = blob.readUInt32BE(0);
	return blob.subarray(4, 4 + n).toString("latin1");
}

/** OpenSSH's fingerprint form: SHA256:base64 without padding. */
export function fingerprint(blob: Buffer): string {
	return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

export function verifyHostKey(known: KnownKey[], blob: Buffer): HostKeyVerdict {
	const b64 = blob.toString("base64");
	const revoked = known.find((k) => k.revoked && k.key === b64);
	if (revoked) return { kind: "revoked", entry: revoked };
	const trusted = known.filter((k) => !k.revoked);
	const hit = trusted.find((k) => k.key === b64);
	if (hit) return { kind: "ok", entry: hit };
	const type = blobKeyType(blob);
	const sameType = trusted.filter((k) => k.type === type);
	if (sameType.length > 0) return { kind: "mismatch", entries: sameType };
	if (trusted.length > 0) return { kind: "other-type", entries: trusted };
	return { kind: "unknown" };
}

/** Host key algorithms ssh2 can verify, for each key type a known_hosts line can hold. */
const ALGORITHMS_FOR_TYPE: Record<string, string[]> = {
	"ssh-ed25519": ["ssh-ed25519"],
	"ecdsa-sha2-nistp256": ["ecdsa-sha2-nistp256"],
	"ecdsa-sha2-nistp384": ["ecdsa-sha2-nistp384"],
	"ecdsa-sha2-nistp521": ["ecdsa-sha2-nistp521"],
	"ssh-rsa": ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"],
};

/**
 * Ask the server for a key type we already know for it (as OpenSSH does), so a host with several
 * keys presents the one in known_hosts. Undefined: no preference (ssh2's defaults).
 */
export function preferredHostKeyAlgorithms(known: KnownKey[]): string[] | undefined {
	const algos = new Set<string>();
	for (const k of known) if (!k.revoked) for (const a of ALGORITHMS_FOR_TYPE[k.type] ?? []) algos.add(a);
	return algos.size > 0 ? [...algos] : undefined;
}
