/**
 * Which test files run in which tier. `npm test` runs the fast tier: every file not claimed by a
 * suite below (unit tests, the local backend, MCP, the CLI, pi's extension in-process). Each
 * suite here needs something the fast tier does not assume, or takes long; `npm run test:all`
 * (what CI runs) runs them all, and KEEL_TEST_SUITES=name,name adds some to `npm test`.
 *
 * A file belongs to the first suite whose globs match it. Files that exercise several backends
 * (test/cli, test/python/backends.test.ts) stay in the fast tier: they skip, with a message,
 * the parts whose component is missing.
 */

export interface Suite {
	name: string;
	/** Globs relative to the repository root. */
	files: string[];
	/** What the suite needs, in a few words. */
	needs: string;
	/** How to get it and switch the suite on. */
	enable: string;
}

export const SUITES: readonly Suite[] = [
	{
		name: "ssh",
		files: [
			"test/backends/ssh.test.ts",
			"test/backends/ssh-!(units).test.ts",
			"test/checkpoints/undo-ssh.test.ts",
		],
		needs: "sshd and ssh-keygen (openssh-server); each file starts a loopback sshd",
		enable: "apt-get install openssh-server; KEEL_TEST_SUITES=ssh npm test",
	},
	{
		name: "bwrap",
		files: [
			"test/backends/bwrap-*.test.ts",
			"test/safety/bwrap-*.test.ts",
			"test/checkpoints/undo-bwrap.test.ts",
		],
		needs: "bubblewrap (bwrap) with user namespaces",
		enable: "apt-get install bubblewrap; KEEL_TEST_SUITES=bwrap npm test",
	},
	{
		name: "container",
		files: ["test/backends/container*.test.ts", "test/checkpoints/undo-podman.test.ts"],
		needs: "podman and a running test container named by KEEL_TEST_PODMAN",
		enable: "KEEL_TEST_PODMAN=$(.ci/podman-setup keel-test) KEEL_TEST_SUITES=container npm test",
	},
	{
		name: "frameworks",
		files: [
			"test/adapters/*.test.ts",
			"test/backends/cloud-sdk*.test.ts",
			"test/backends/ai-sdk-sandbox.test.ts",
		],
		needs:
			"the framework and cloud-SDK devDependencies (ai, @openai/agents, @langchain/core, deepagents, @mastra/core, the sandbox SDKs)",
		enable: "KEEL_TEST_SUITES=frameworks npm test",
	},
	{
		name: "agents",
		files: [
			"test/pi/pi073.test.ts",
			"test/pi/pi1.test.ts",
			"test/pi/launcher.test.ts",
			"test/clients/*.test.ts",
		],
		needs:
			"scripted agent sessions: pi 0.73 (devDependency), pi 1.x on Node >= 22.19 (KEEL_PI1_DIR, KEEL_NODE22), Claude Code and Codex CLIs (KEEL_CLIENTS_DIR)",
		enable: "see CONTRIBUTING.md (the prefixes .ci/run installs); KEEL_TEST_SUITES=agents npm test",
	},
	{
		name: "package",
		files: ["test/compat/packed.test.ts"],
		needs: "npm pack, then an install of the tarball into a fresh project (the npm registry or cache)",
		enable: "KEEL_TEST_SUITES=package npm test",
	},
	{
		name: "stress",
		files: [
			"test/durability/crash.test.ts",
			"test/durability/multi-crash.test.ts",
			"test/durability/undo-crash.test.ts",
			"test/durability/property.test.ts",
			"test/durability/fault-injection.test.ts",
			"test/durability/power-loss.test.ts",
			"test/fuzz/*.test.ts",
			"test/backends/leftovers-*.test.ts",
			"test/safety/cross-process.test.ts",
			"test/robust/read-window-memory.test.ts",
			"test/extensions/smoke*.test.ts",
		],
		needs: "time: randomized crash schedules, fuzzing, many processes and long waits",
		enable: "KEEL_TEST_SUITES=stress npm test (seeds: KEEL_CRASH_SEED, KEEL_FUZZ_SEED)",
	},
];

/** The tier a run asked for: "all" (every suite) or the fast tier plus the named suites. */
export function chosenSuites(env: NodeJS.ProcessEnv): { all: boolean; added: Set<string> } {
	const all = env.KEEL_TEST_TIER === "all";
	const added = new Set(
		(env.KEEL_TEST_SUITES ?? "")
			.split(",")
			.map((s) => s.trim())
			.filter(Boolean),
	);
	const unknown = [...added].filter((name) => !SUITES.some((s) => s.name === name));
	if (unknown.length > 0) {
		throw new Error(
			`KEEL_TEST_SUITES names unknown suites: ${unknown.join(", ")} (known: ${SUITES.map((s) => s.name).join(", ")})`,
		);
	}
	return { all, added };
}

/** The suites a run leaves out. */
export function skippedSuites(env: NodeJS.ProcessEnv): Suite[] {
	const { all, added } = chosenSuites(env);
	return all ? [] : SUITES.filter((s) => !added.has(s.name));
}
