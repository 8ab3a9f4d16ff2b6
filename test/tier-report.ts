/**
 * A vitest reporter for `npm test`: after the summary, which suites this run left out, what each
 * needs and how to switch it on (test/tiers.ts). Silent when nothing was left out.
 */
import type { Reporter } from "vitest/reporters";
import type { Suite } from "./tiers.js";

export class TierReporter implements Reporter {
	constructor(private readonly skipped: readonly Suite[]) {}

	onTestRunEnd(): void {
		if (this.skipped.length === 0) return;
		const lines = [
			"",
			`${this.skipped.length} suite${this.skipped.length === 1 ? "" : "s"} not run. \`npm run test:all\` runs everything (CI does); KEEL_TEST_SUITES=name,name adds some.`,
			...this.skipped.flatMap((s) => [
				`  ${s.name.padEnd(11)}needs ${s.needs}`,
				`  ${"".padEnd(11)}${s.enable}`,
			]),
			"",
		];
		process.stdout.write(`${lines.join("\n")}\n`);
	}
}
