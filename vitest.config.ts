import { configDefaults, defineConfig } from "vitest/config";
import { TierReporter } from "./test/tier-report.js";
import { includedSuites, skippedSuites } from "./test/tiers.js";

// `npm test` runs the fast tier; `npm run test:all` sets KEEL_TEST_TIER=all (test/tiers.ts). A test
// file named on the command line (`npx vitest run test/backends/ssh.test.ts`) runs whatever its tier.
const args = process.argv.slice(2);
const included = includedSuites(process.env, args);
const skipped = skippedSuites(process.env, args);

export default defineConfig({
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
