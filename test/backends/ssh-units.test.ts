/** The ssh backend's pure parts: the spec parser, known_hosts matching, framing, identity lines. */
import { execFileSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { shq } from "../../src/backend/shell-quote.js";
import { newMarker, RecordSplitter } from "../../src/backend/ssh/framing.js";
import { formatIdentity, parseIdentity } from "../../src/backend/ssh/identity.js";
import {
	blobKeyType,
	hostFieldMatches,
	hostLookupName,
	keysFor,
	preferredHostKeyAlgorithms,
	verifyHostKey,
} from "../../src/backend/ssh/known-hosts.js";
import { parseSshSpec } from "../../src/backend/ssh/spec.js";

describe("parseSshSpec", () => {
	it("parses user, host, port and root", () => {
		expect(parseSshSpec("ssh://alice@example.com:2222/srv/app")).toEqual({
			username: "alice",
			host: "example.com",
			port: 2222,
			root: "/srv/app",
		});
		expect(parseSshSpec("ssh://example.com/srv/app/")).toEqual({
			username: undefined,
			host: "example.com",
			port: 22,
			root: "/srv/app",
		});
		expect(parseSshSpec("ssh://bob@[::1]:22/")).toMatchObject({ host: "::1", port: 22, root: "/" });
		expect(parseSshSpec("ssh://h").root).toBeUndefined();
		expect(parseSshSpec("ssh://us%40er@h/a%20b").username).toBe("us@er");
		expect(parseSshSpec("ssh://h/a%20b").root).toBe("/a b");
	});

	it("refuses what it cannot use, naming the form", () => {
		for (const bad of ["http://h/x", "ssh://u:pw@h/x", "ssh:///x", "nonsense", "ssh://h/x?y=1"]) {
			expect(() => parseSshSpec(bad)).toThrow(/ssh:\/\/user@host\[:port\]\/path/);
		}
	});
});

describe("known_hosts", () => {
	const blob = (type: string, body: Buffer) => {
		const t = Buffer.from(type);
		const len = Buffer.alloc(4);
		len.writeUInt32BE(t.length);
		return Buffer.concat([len, t, body]);
	};
	const key1 = blob("ssh-ed25519", randomBytes(36));
	const key2 = blob("ssh-ed25519", randomBytes(36));
	const rsa = blob("ssh-rsa", randomBytes(60));
	const b64 = (b: Buffer) => b.toString("base64");

	it("names hosts as OpenSSH does and matches patterns", () => {
		expect(hostLookupName("h", 22)).toBe("h");
		expect(hostLookupName("h", 2222)).toBe("[h]:2222");
		expect(hostFieldMatches("a,h,b", "h")).toBe(true);
		expect(hostFieldMatches("*.example.com", "db.example.com")).toBe(true);
		expect(hostFieldMatches("*.example.com,!db.example.com", "db.example.com")).toBe(false);
		expect(hostFieldMatches("[h]:2222", "[h]:2222")).toBe(true);
		expect(hostFieldMatches("h", "[h]:2222")).toBe(false);
		expect(hostFieldMatches("h?st", "host")).toBe(true);
		const salt = randomBytes(20);
		const hash = createHmac("sha1", salt).update("[h]:2222").digest("base64");
		expect(hostFieldMatches(`|1|${salt.toString("base64")}|${hash}`, "[h]:2222")).toBe(true);
		expect(hostFieldMatches(`|1|${salt.toString("base64")}|${hash}`, "h")).toBe(false);
	});

	it("verdicts: ok, mismatch, other type, unknown, revoked", () => {
		const text = [
			"# comment",
			"",
			`h ssh-ed25519 ${b64(key1)} comment here`,
			`@cert-authority * ssh-ed25519 ${b64(key2)}`,
			`other ssh-rsa ${b64(rsa)}`,
		].join("\n");
		const known = keysFor(text, "h", "kh");
		expect(known).toHaveLength(1);
		expect(known[0]).toMatchObject({ file: "kh", line: 3, type: "ssh-ed25519" });
		expect(verifyHostKey(known, key1).kind).toBe("ok");
		expect(verifyHostKey(known, key2).kind).toBe("mismatch");
		expect(verifyHostKey(known, rsa).kind).toBe("other-type");
		expect(verifyHostKey([], key1).kind).toBe("unknown");
		const revoked = keysFor(`@revoked * ssh-ed25519 ${b64(key1)}\nh ssh-ed25519 ${b64(key1)}`, "h", "kh");
		expect(verifyHostKey(revoked, key1).kind).toBe("revoked");
		expect(blobKeyType(rsa)).toBe("ssh-rsa");
		expect(preferredHostKeyAlgorithms(keysFor(text, "other", "kh"))).toEqual([
			"rsa-sha2-512",
			"rsa-sha2-256",
			"ssh-rsa",
		]);
		expect(preferredHostKeyAlgorithms([])).toBeUndefined();
	});
});

describe("framing", () => {
	it("splits records out of a stream cut at every possible byte", () => {
		const m = newMarker();
		const data = Buffer.concat([
			Buffer.from("out\x1f"),
			Buffer.from(`\x1f${m} p 12 13 \n`),
			Buffer.from("more\x1fabc"),
			Buffer.from(`\x1f${m.slice(0, 5)}`), // a prefix of the token that is not the token
			Buffer.from(`\x1f${m} e\nNEXT`),
		]);
		for (let step = 1; step <= data.length; step++) {
			const got: Buffer[] = [];
			const records: string[] = [];
			const s = new RecordSplitter(
				m,
				(c) => got.push(Buffer.from(c)),
				(body) => {
					records.push(body);
					return body === "e";
				},
			);
			let rest: Buffer | undefined;
			for (let i = 0; i < data.length; i += step) {
				rest = s.push(data.subarray(i, i + step));
				if (rest !== undefined) {
					rest = Buffer.concat([rest, data.subarray(i + step)]);
					break;
				}
			}
			expect(Buffer.concat(got).toString("latin1")).toBe(`out\x1fmore\x1fabc\x1f${m.slice(0, 5)}`);
			expect(records).toEqual(["p 12 13", "e"]);
			expect(rest?.toString()).toBe("NEXT");
		}
	});

	it("quotes any string for the shell", () => {
		const nasty = `it's "a" $HOME \`x\` \\ \n new line ;|&*?`;
		expect(execFileSync("sh", ["-c", `printf %s ${shq(nasty)}`], { encoding: "utf8" })).toBe(nasty);
	});
});

describe("identity lines", () => {
	it("round-trips what the remote stat prints", () => {
		for (const [line, ns] of [
			["81a4 12 65024 2417232 1795982714.850531433 1795982714.869184158", true],
			["41ed 4096 2049 2 1700000000.000000001 1700000000.100000000", true],
			["a1ff 7 2049 99 1700000000 1700000001", false],
		] as const) {
			const st = parseIdentity(line)!;
			expect(formatIdentity(st, ns)).toBe(line);
		}
		expect(parseIdentity("81a4 12 65024 2417232 1795982714.850531433 1795982714.869184158")).toMatchObject({
			type: "file",
			mode: 0o644,
			size: 12,
			mtimeNs: 1795982714850531433n,
		});
		expect(parseIdentity("a1ff 7 2049 99 1700000000 1700000001")?.type).toBe("symlink");
		expect(parseIdentity("stat: cannot statx")).toBeUndefined();
		expect(formatIdentity({ ...parseIdentity("81a4 1 1 1 1 1")!, type: "other" }, false)).toBeUndefined();
	});
});
