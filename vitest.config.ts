import { configDefaults, defineConfig } from "vitest/config";
import { chartsInstalled, frameworksInstalled, frameworksResolver } from "./test/frameworks.mjs";
import { TierReporter } from "./test/tier-report.js";
import { includedSuites, SUITES, uninstalledSuites } from "./test/tiers.js";

// `npm test` runs the fast tier; `npm run test:all` sets KEEL_TEST_TIER=all (test/tiers.ts). A test
// file named on the command line (`npx vitest run test/backends/ssh.test.ts`) runs whatever its tier.
// A suite whose packages are not installed (test/package.json's frameworks, bench/package.json's
// chart packages) is left out locally, saying how to install them; CI installs them, and there a
// missing one fails.
const args = process.argv.slice(2);
const uninstalled = uninstalledSuites(process.env, {
	frameworks: frameworksInstalled(),
	charts: chartsInstalled(),
});
const included = includedSuites(process.env, args).filter((s) => !uninstalled.includes(s));
// Each left-out suite once: one whose package set is missing may also be one the tier leaves out.
const skipped = SUITES.filter((s) => !included.includes(s));

export default defineConfig({
	// keel's adapters import their framework by name from src/: it is found in test/node_modules.
	plugins: [frameworksResolver()],
	test: {
		include: ["test/**/*.test.ts"],
		exclude: [...configDefaults.exclude, ...skipped.flatMap((s) => s.files)],
		// Files of the fast tier with parts in a suite (the contract files) ask which suites are on.
		provide: { keelSuites: included.map((s) => s.name) },
		reporters: skipped.length === 0 ? ["default"] : ["default", new TierReporter(skipped)],
		testTimeout: 30_000,
		hookTimeout: 30_000,
		pool: "forks",
		// Two test files at once, whatever the core count (vitest's default on 2 cores is one): most
		// of the suite waits on sshd, bwrap, podman and child processes, so two fill the machine
		// better than one (.ci/run prints the slowest files and the length is kept under 25 min).
		maxWorkers: 2,
	},
});
