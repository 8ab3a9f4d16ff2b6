/**
 * Which test files run in which tier. `npm test` runs the fast tier: every file not claimed by a
 * suite below (unit tests, the local backend, MCP in-process, pi's extension in-process), a few
 * seconds a file. Each suite here needs something the fast tier does not assume, or takes long;
 * `npm run test:all` (what CI runs) runs them all, and KEEL_TEST_SUITES=name,name adds some to
 * `npm test`. test/docs/tiers.test.ts holds this table to the files on disk and to the commands.
 *
 * A file belongs to at most one suite. The contract files (test/contract/*.test.ts) are in the fast
 * tier for the local backend; their describes for every other backend are declared only in a run
 * that includes the `backends` suite (contractBackends in test/contract/backends.ts).
 *
 * To add a suite, add an entry anywhere in the list; to move a file, add its glob to one suite.
 */

import picomatch from "picomatch";

export interface Suite {
	name: string;
	/** Globs relative to the repository root. */
	files: string[];
	/** What the suite needs, in a few words. */
	needs: string;
	/** How to get it and switch the suite on. */
	enable: string;
	/** The package set (outside the root install) the suite cannot load without. */
	installed?: "frameworks" | "charts";
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
		name: "backends",
		files: ["test/python/backends.test.ts", "test/backends/exec-*.test.ts"],
		needs:
			"the ssh, bwrap and container suites' components: the tool contract (test/contract) and Python on every backend besides local, and the exec backend; a part whose component is missing skips",
		enable: "KEEL_TEST_SUITES=backends npm test",
	},
	{
		name: "frameworks",
		files: [
			"test/adapters/*.test.ts",
			"test/backends/cloud-sdk*.test.ts",
			"test/backends/ai-sdk-sandbox.test.ts",
		],
		needs:
			"the frameworks and sandbox SDKs of test/package.json (ai, @openai/agents, @langchain/core, deepagents, @mastra/core, the Claude Agent SDK, e2b, Daytona, Vercel Sandbox), installed into test/node_modules",
		enable: "npm run install:frameworks; KEEL_TEST_SUITES=frameworks npm test",
		installed: "frameworks",
	},
	{
		name: "charts",
		files: ["test/bench/scaling-plot.test.ts"],
		needs: "vega, vega-lite and resvg (bench/package.json), installed into bench/node_modules",
		enable: "npm run install:bench; KEEL_TEST_SUITES=charts npm test",
		installed: "charts",
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
		name: "cli",
		files: ["test/cli/*.test.ts", "test/mcp/stdio.test.ts"],
		needs: "time: the keel CLI and `keel serve` (the build, dist/) started as a new process for each test",
		enable: "KEEL_TEST_SUITES=cli npm test",
	},
	{
		name: "checkers",
		files: ["test/drift/diagnostics-tsc.test.ts"],
		needs: "time: the repository's tsc run as the workspace's checker on a project, once or twice per change",
		enable: "KEEL_TEST_SUITES=checkers npm test",
	},
	{
		name: "exfat",
		files: ["test/safety/protected-set-exfat.test.ts"],
		needs:
			"root, a free loop device, mkfs.exfat and mount.exfat-fuse (exfatprogs, exfat-fuse): the protected set on a real case-insensitive file system",
		enable: "apt-get install exfatprogs exfat-fuse; as root: KEEL_TEST_SUITES=exfat npm test",
	},
	{
		name: "slow",
		files: [
			"test/paths/battery.test.ts",
			"test/bad-input/tools.test.ts",
			"test/robust/read-window.test.ts",
			"test/search/bounded.test.ts",
		],
		needs:
			"time: exhaustive tables and big inputs on the local backend (the full path battery, every bad input per tool, files of many MiB); the compact path battery in test/contract runs in the fast tier",
		enable: "KEEL_TEST_SUITES=slow npm test",
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
			"test/durability/memory.test.ts",
			"test/fuzz/*.test.ts",
			"test/backends/leftovers*.test.ts",
			"test/safety/cross-process.test.ts",
			"test/safety/race-swap.test.ts",
			"test/robust/read-window-memory.test.ts",
			"test/robust/stale-group-kill.test.ts",
			"test/extensions/smoke*.test.ts",
		],
		needs:
			"time: randomized crash schedules, fuzzing, races in tight loops, many processes, 50 MB payloads and long waits",
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

/**
 * The suites a run includes: every one for test:all, and when test files are named on the command
 * line (`npx vitest run test/backends/ssh.test.ts` runs a file whatever its tier); otherwise the
 * ones KEEL_TEST_SUITES names. A directory filter (`npx vitest run test/contract`) keeps the tier.
 */
export function includedSuites(env: NodeJS.ProcessEnv, args: readonly string[] = []): Suite[] {
	const { all, added } = chosenSuites(env);
	const namesFiles = args.some((arg) => arg.endsWith(".test.ts"));
	return all || namesFiles ? [...SUITES] : SUITES.filter((s) => added.has(s.name));
}

/**
 * The suites whose package set is missing here: left out of a local run with the reason (`enable`
 * says how to install it). CI (CI=true) installs every set, so there none is left out and a
 * missing one fails the run.
 */
export function uninstalledSuites(
	env: NodeJS.ProcessEnv,
	installed: Record<NonNullable<Suite["installed"]>, boolean>,
): Suite[] {
	if (env.CI === "true") return [];
	return SUITES.filter((s) => s.installed !== undefined && !installed[s.installed]);
}

/** The suites a run leaves out. */
export function skippedSuites(env: NodeJS.ProcessEnv, args: readonly string[] = []): Suite[] {
	const included = includedSuites(env, args);
	return SUITES.filter((s) => !included.includes(s));
}

const SUITE_MATCHERS = SUITES.map((suite) => ({ suite, matches: picomatch(suite.files) }));

/** The tier a test file (relative to the repository root) belongs to: its suite's name, or "fast". */
export function tierOf(file: string): string {
	const claims = SUITE_MATCHERS.filter((m) => m.matches(file)).map((m) => m.suite);
	if (claims.length > 1) throw new Error(`${file} is claimed by ${claims.map((s) => s.name).join(" and ")}`);
	return claims[0]?.name ?? "fast";
}

declare module "vitest" {
	export interface ProvidedContext {
		/** The names of the suites this run includes (vitest.config.ts provides them). */
		keelSuites: string[];
	}
}
