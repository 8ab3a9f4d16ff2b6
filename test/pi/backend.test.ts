/**
 * Where keel's tools run inside pi: the backend setting (flag over environment over pi's global
 * settings; never a project's settings; a bad spec refuses, never falls back to this machine) and
 * its lifetime in the SessionSlot (opened per session with the session's roots, part of the
 * session's identity, closed with it).
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BackendSetting, resolveConfig } from "../../src/adapters/pi/config.js";
import { loadConfig } from "../../src/adapters/pi/load-config.js";
import { SessionSlot } from "../../src/adapters/pi/sessions.js";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Backend } from "../../src/backend/types.js";
import { KeelError } from "../../src/boundary/errors.js";
import { bwrapAvailable } from "../contract/backends.js";

const none = () => undefined;
const flagsOf = (flags: Record<string, string | boolean>) => (n: string) => flags[n];

describe("pi extension config: the backend", () => {
	it("defaults to this machine", () => {
		const c = resolveConfig({ cwd: "/w", flag: none, env: {} });
		expect(c.backend).toEqual({ spec: "local", network: false, insecureHostKey: false });
		expect(c.backend.open).toBeUndefined();
		expect(c.backend.error).toBeUndefined();
	});

	it("comes from the flag, then the environment, then the global settings", () => {
		const global = { backend: "ssh://me@example.com/srv", identity: "/keys/id" };
		const fromFlag = resolveConfig({
			cwd: "/w",
			flag: flagsOf({ "keel-backend": "bwrap", "keel-network": true }),
			env: { KEEL_BACKEND: "ssh://me@example.com/env" },
			globalSettings: { backend: "local" },
		});
		expect(fromFlag.backend).toMatchObject({ spec: "bwrap", network: true });
		expect(fromFlag.backend.open).toEqual(expect.any(Function));
		expect(fromFlag.warnings).toEqual([]);

		const fromEnv = resolveConfig({
			cwd: "/w",
			flag: none,
			env: { KEEL_BACKEND: "bwrap", KEEL_NETWORK: "yes" },
			globalSettings: { backend: "local", network: false },
		});
		expect(fromEnv.backend).toMatchObject({ spec: "bwrap", network: true });

		const fromGlobal = resolveConfig({ cwd: "/w", flag: none, env: {}, globalSettings: global });
		expect(fromGlobal.backend).toMatchObject({
			spec: "ssh://me@example.com/srv",
			identity: "/keys/id",
			insecureHostKey: false,
		});
		expect(fromGlobal.root).toBe("/srv");
		expect(fromGlobal.warnings).toEqual([]);
	});

	it("a project's settings never choose the backend or widen it", () => {
		// A repository asking for this machine does not take the user's global sandbox away...
		const c = resolveConfig({
			cwd: "/w",
			flag: none,
			env: {},
			projectSettings: { backend: "local", network: true, profile: "unified" },
			globalSettings: { backend: "bwrap" },
		});
		expect(c.profile).toBe("unified");
		expect(c.backend).toMatchObject({ spec: "bwrap", network: false });
		expect(c.backend.open).toEqual(expect.any(Function));
		// ...nor sends the session to a host of its choosing with the user's keys.
		const ssh = resolveConfig({
			cwd: "/w",
			flag: none,
			env: {},
			projectSettings: {
				backend: "ssh://me@evil.example/x",
				identity: "/home/me/.ssh/id_ed25519",
				insecureHostKey: true,
			},
		});
		expect(ssh.backend).toEqual({ spec: "local", network: false, insecureHostKey: false });
		expect(ssh.root).toBe("/w");
		// Said aloud, so the user is not left believing the project's choice took effect.
		expect(ssh.warnings).toEqual([
			"the project's .pi/settings.json may set only profile and disable; its backend, identity, insecureHostKey are ignored",
		]);
		expect(ssh.error).toBeUndefined();
	});

	it("a bad spec is an error and a warning, never this machine", () => {
		const cases: [Record<string, string | boolean>, Record<string, string>, RegExp][] = [
			[{ "keel-backend": "bwarp" }, {}, /unknown backend "bwarp" \(use local, bwrap or ssh:/],
			[{ "keel-backend": "ssh://me@host" }, {}, /ssh:\/\/ needs the remote directory/],
			[{ "keel-backend": "ssh://me:pw@host/x" }, {}, /passwords are not accepted/],
			[{}, { KEEL_NETWORK: "1" }, /^--keel-network only applies to --keel-backend bwrap$/],
			[
				{ "keel-backend": "bwrap", "keel-identity": "/k" },
				{},
				/^--keel-identity and --keel-insecure-host-key only apply to --keel-backend ssh:\/\/\.\.\.$/,
			],
		];
		for (const [flags, env, why] of cases) {
			const c = resolveConfig({ cwd: "/w", flag: flagsOf(flags), env });
			expect(c.backend.error, JSON.stringify(flags)).toMatch(why);
			expect(c.backend.open).toBeUndefined();
			expect(c.warnings).toEqual([expect.stringMatching(/keel's tools will refuse to run/)]);
			expect(c.warnings[0]).toContain(c.backend.error);
		}
	});

	it("ssh: the spec's path is the root, allow lists resolve against it, a configured root is ignored aloud", () => {
		const c = resolveConfig({
			cwd: "/w",
			flag: flagsOf({
				"keel-backend": "ssh://me@example.com:2222/srv/app",
				"keel-root": "sub",
				"keel-allow": "../shared",
				"keel-identity": "~/.ssh/id_test",
				"keel-insecure-host-key": true,
			}),
			env: {},
		});
		expect(c.backend.error).toBeUndefined();
		expect(c.root).toBe("/srv/app");
		expect(c.allow).toEqual(["/srv/shared"]);
		expect(c.backend).toMatchObject({ identity: join(homedir(), ".ssh", "id_test"), insecureHostKey: true });
		expect(c.warnings).toEqual([expect.stringMatching(/keel root "sub" is ignored.*\/srv\/app/)]);
		// A relative identity file is the session's cwd's.
		const rel = resolveConfig({
			cwd: "/w",
			flag: none,
			env: { KEEL_BACKEND: "ssh://h/x", KEEL_IDENTITY: "keys/id" },
		});
		expect(rel.backend.identity).toBe("/w/keys/id");
	});

	it("switches: words and JSON booleans; an unreadable one is off and an error that refuses every call", () => {
		const env = (KEEL_NETWORK: string) =>
			resolveConfig({
				cwd: "/w",
				flag: none,
				env: { KEEL_BACKEND: "bwrap", KEEL_NETWORK },
				globalSettings: { network: true },
			});
		expect(env("on").backend.network).toBe(true);
		expect(env("0").backend.network).toBe(false);
		const bad = env("please");
		expect(bad.backend.network).toBe(false);
		expect(bad.error).toBe(
			'KEEL_NETWORK is "please", not a switch (use 1, true, yes, on, or 0, false, no, off)',
		);
		expect(bad.warnings).toEqual([expect.stringContaining(bad.error!)]);
		const json = resolveConfig({
			cwd: "/w",
			flag: none,
			env: {},
			globalSettings: { backend: "bwrap", network: true },
		});
		expect(json.backend.network).toBe(true);
	});

	it("loadConfig: the global settings.json's backend stands against the project's", async () => {
		const dir = await mkdtemp(join(tmpdir(), "keel-pi-backend-config-"));
		try {
			await mkdir(join(dir, "ws", ".pi"), { recursive: true });
			await mkdir(join(dir, "agent"));
			await writeFile(
				join(dir, "ws", ".pi", "settings.json"),
				JSON.stringify({ keel: { backend: "local", profile: "unified" } }),
			);
			await writeFile(join(dir, "agent", "settings.json"), JSON.stringify({ keel: { backend: "bwrap" } }));
			const c = loadConfig(join(dir, "ws"), none, { PI_CODING_AGENT_DIR: join(dir, "agent") });
			expect(c.profile).toBe("unified");
			expect(c.backend.spec).toBe("bwrap");
		} finally {
			await rm(dir, { recursive: true, force: true });
		}
	});
});

describe("SessionSlot: the backend belongs to the session", () => {
	let dir: string;
	let ws: string;
	beforeEach(async () => {
		dir = await realpath(await mkdtemp(join(tmpdir(), "keel-pi-slot-")));
		ws = join(dir, "ws");
		for (const d of [ws, join(dir, "rw"), join(dir, "ro")]) await mkdir(d);
	});
	afterEach(async () => {
		await rm(dir, { recursive: true, force: true });
	});

	/** A setting whose backend is this machine's, with every open and close recorded. */
	function recorded(setting: Partial<BackendSetting> = {}) {
		const log: string[] = [];
		const opened: Backend[] = [];
		const b: BackendSetting = {
			spec: "recorded",
			network: false,
			insecureHostKey: false,
			...setting,
			open: async (root, allow, allowRead) => {
				const n = opened.length;
				log.push(`open ${n} ${root} [${allow}] [${allowRead}]`);
				const backend: Backend = {
					...createLocalBackend(),
					close: async () => {
						log.push(`close ${n}`);
					},
				};
				opened.push(backend);
				return backend;
			},
		};
		return { b, log, opened };
	}

	it("is opened with the session's root and allow lists, kept for the same setting, closed with the session", async () => {
		const slot = new SessionSlot();
		const { b, log, opened } = recorded();
		const req = { root: ws, allow: [join(dir, "rw")], allowRead: [join(dir, "ro")], backendSetting: b };
		const one = await slot.get(req);
		expect(one.backend).toBe(opened[0]);
		expect(await slot.get({ ...req, backendSetting: { ...b } })).toBe(one);
		expect(log).toEqual([`open 0 ${ws} [${join(dir, "rw")}] [${join(dir, "ro")}]`]);
		await slot.close();
		expect(log).toEqual([`open 0 ${ws} [${join(dir, "rw")}] [${join(dir, "ro")}]`, "close 0"]);
	});

	it("a different backend setting is a different session: the old one closes with its backend", async () => {
		const slot = new SessionSlot();
		const { b, log } = recorded();
		const one = await slot.get({ root: ws, backendSetting: b });
		const two = await slot.get({ root: ws, backendSetting: { ...b, network: true } });
		expect(two).not.toBe(one);
		const three = await slot.get({ root: ws, backendSetting: { ...b, network: true, spec: "other" } });
		expect(three).not.toBe(two);
		await slot.close();
		expect(log.filter((l) => l.startsWith("close"))).toEqual(["close 0", "close 1", "close 2"]);
	});

	it("a backend whose session cannot open is closed at once, and the next call tries again", async () => {
		const slot = new SessionSlot();
		const { b, log } = recorded();
		const missing = join(dir, "missing");
		await expect(slot.get({ root: missing, backendSetting: b })).rejects.toThrow();
		expect(log).toEqual([`open 0 ${missing} [] []`, "close 0"]);
		await mkdir(missing);
		const s = await slot.get({ root: missing, backendSetting: b });
		expect(s.backend.kind).toBe("local");
		await slot.close();
		expect(log.at(-1)).toBe("close 1");
	});

	it("a setting with an error opens nothing, on every call: no backend, no session on this machine", async () => {
		const created: unknown[] = [];
		const slot = new SessionSlot(async (opts) => {
			created.push(opts);
			throw new Error("must not be reached");
		});
		const { b, log } = recorded({ error: 'unknown backend "bwarp"' });
		for (let i = 0; i < 2; i++) {
			const e = await slot.get({ root: ws, backendSetting: b }).catch((x: unknown) => x);
			expect(e).toBeInstanceOf(KeelError);
			expect((e as KeelError).code).toBe("BACKEND_UNAVAILABLE");
			expect((e as KeelError).message).toMatch(/backend setting is invalid: unknown backend "bwarp"/);
		}
		expect(log).toEqual([]);
		expect(created).toEqual([]);
		expect(await slot.opened()).toBeUndefined();
	});
});

const bwrap = await bwrapAvailable();
if (bwrap !== true) console.warn(`[keel pi backend] bwrap tests skipped: ${bwrap}`);

describe.skipIf(bwrap !== true)("SessionSlot with --keel-backend bwrap (real bubblewrap)", () => {
	let dir: string;
	beforeEach(async () => {
		dir = await realpath(await mkdtemp(join(tmpdir(), "keel-pi-bwrap-")));
		for (const d of ["ws", "rw", "ro", "elsewhere"]) await mkdir(join(dir, d));
	});
	afterEach(async () => {
		await rm(dir, { recursive: true, force: true });
	});

	it("the root and allow lists are the sandbox's writable roots; nothing else written reaches the host", async () => {
		const c = resolveConfig({
			cwd: join(dir, "ws"),
			flag: flagsOf({ "keel-backend": "bwrap", "keel-allow": "../rw", "keel-allow-read": "../ro" }),
			env: {},
		});
		const slot = new SessionSlot();
		try {
			const s = await slot.get({
				root: c.root,
				allow: c.allow,
				allowRead: c.allowRead,
				backendSetting: c.backend,
			});
			expect(s.backend.kind).toBe("bwrap");
			const r = await s.call("bash", {
				command: [
					"echo ws > in-ws.txt",
					`echo rw > ${dir}/rw/in-rw.txt`,
					`(echo ro > ${dir}/ro/in-ro.txt) 2>/dev/null || echo ro-refused`,
					`(echo elsewhere > ${dir}/elsewhere/out.txt) 2>/dev/null || echo elsewhere-refused`,
					// Masked in the sandbox (unreadable or empty); root on the host reads it.
					"cat /etc/shadow 2>/dev/null | wc -c",
				].join("; "),
			});
			expect(r.ok, JSON.stringify(r)).toBe(true);
			expect(await readFile(join(dir, "ws", "in-ws.txt"), "utf8")).toBe("ws\n");
			expect(await readFile(join(dir, "rw", "in-rw.txt"), "utf8")).toBe("rw\n");
			expect(existsSync(join(dir, "ro", "in-ro.txt"))).toBe(false);
			expect(existsSync(join(dir, "elsewhere", "out.txt"))).toBe(false);
			const text = r.ok ? r.content.map((x) => (x.type === "text" ? x.text : "")).join("") : "";
			expect(text).toContain("ro-refused");
			expect(text).toContain("elsewhere-refused");
			expect(text.trim().split("\n").at(-1)).toBe("0");
		} finally {
			await slot.close();
		}
	});
});
