import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		include: ["test/**/*.test.ts"],
		testTimeout: 30_000,
		hookTimeout: 30_000,
		pool: "forks",
		// Two test files at once, whatever the core count (vitest's default on 2 cores is one): most
		// of the suite waits on sshd, bwrap, podman and child processes, so two fill the machine
		// better than one (.ci/run prints the slowest files and the length is kept under 25 min).
		maxWorkers: 2,
	},
});
