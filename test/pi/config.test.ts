/** keel's configuration inside pi: flags over environment over project over global settings. */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/adapters/pi/config.js";
import { loadConfig } from "../../src/adapters/pi/load-config.js";

const none = () => undefined;

describe("pi extension config", () => {
	it("defaults: profile pi, the session's cwd as root, nothing disabled", () => {
		expect(resolveConfig({ cwd: "/w", flag: none, env: {} })).toEqual({
			profile: "pi",
			root: "/w",
			allow: [],
			allowRead: [],
			disabled: [],
			backend: { spec: "local", network: false, insecureHostKey: false },
			checkpoints: false,
			diagnostics: [],
			warnings: [],
		});
	});

	it("flags win over the environment, which wins over settings", () => {
		const flags: Record<string, string> = { "keel-profile": "unified", "keel-allow": "../a, /b" };
		const c = resolveConfig({
			cwd: "/w/p",
			flag: (n) => flags[n],
			env: { KEEL_PROFILE: "pi", KEEL_DISABLE: "grep,find", KEEL_ROOT: "sub" },
			projectSettings: { disable: ["ls"], profile: "pi" },
			globalSettings: { allowRead: ["/ro"] },
		});
		expect(c.profile).toBe("unified");
		expect(c.root).toBe("/w/p/sub");
		expect(c.allow).toEqual(["/w/p/a", "/b"]);
		expect(c.allowRead).toEqual(["/ro"]);
		expect(c.disabled).toEqual(["grep", "find"]);
	});

	it("project settings choose the profile and disabled tools but never widen the roots", () => {
		const c = resolveConfig({
			cwd: "/w",
			flag: none,
			env: {},
			projectSettings: {
				profile: "unified",
				disable: ["bash"],
				root: "/",
				allow: ["/"],
				allowRead: ["/etc"],
			},
		});
		expect(c).toMatchObject({ profile: "unified", root: "/w", allow: [], allowRead: [], disabled: ["bash"] });
	});

	it("a bad profile and a flag without a value are errors, named where they were set", () => {
		const c = resolveConfig({
			cwd: "/w",
			flag: (n) => (n === "keel-disable" ? true : undefined),
			env: { KEEL_PROFILE: "x" },
		});
		expect(c.profile).toBe("pi");
		expect(c.error).toBe(
			'unknown KEEL_PROFILE "x": use one of pi, unified, codex (names are case-sensitive); --keel-disable needs a value',
		);
		expect(c.warnings).toEqual([expect.stringContaining(c.error!)]);
	});

	it("fails closed on every name it does not know: profile case, tool case, settings keys", () => {
		const errorOf = (src: Partial<Parameters<typeof resolveConfig>[0]>) =>
			resolveConfig({ cwd: "/w", flag: none, env: {}, ...src }).error;
		expect(errorOf({ flag: (n) => (n === "keel-profile" ? "Unified" : undefined) })).toMatch(
			/^unknown --keel-profile "Unified": use one of pi, unified, codex/,
		);
		expect(errorOf({ env: { KEEL_DISABLE: "Bash" } })).toMatch(
			/^KEEL_DISABLE names an unknown tool "Bash" \(names are case-sensitive; tools: read, write, edit, bash,/,
		);
		expect(errorOf({ projectSettings: { disable: ["bassh"] } })).toMatch(
			/^keel disable in \.pi\/settings\.json names an unknown tool "bassh"/,
		);
		expect(errorOf({ globalSettings: { profle: "unified" } })).toBe(
			'unknown key "profle" in "keel" of pi\'s global settings.json (keys: profile, root, allow, allowRead, disable, backend, network, env, identity, insecureHostKey, checkpoints, diagnostics)',
		);
		// pi's other tools (another extension's) may be disabled by name; keel's own always may.
		expect(
			errorOf({ env: { KEEL_DISABLE: "web_search,python" }, otherTools: ["web_search"] }),
		).toBeUndefined();
	});

	it("reads the keel object of the project and global settings.json", async () => {
		const dir = await mkdtemp(join(tmpdir(), "keel-pi-config-"));
		try {
			await mkdir(join(dir, "ws", ".pi"), { recursive: true });
			await mkdir(join(dir, "agent"));
			await writeFile(
				join(dir, "ws", ".pi", "settings.json"),
				JSON.stringify({ keel: { profile: "unified" } }),
			);
			await writeFile(join(dir, "agent", "settings.json"), "{ not json");
			const c = loadConfig(join(dir, "ws"), none, { PI_CODING_AGENT_DIR: join(dir, "agent") });
			expect(c.profile).toBe("unified");
			expect(c.warnings[0]).toMatch(/settings\.json is not valid JSON/);
		} finally {
			await rm(dir, { recursive: true, force: true });
		}
	});
});
