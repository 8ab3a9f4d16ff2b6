/**
 * Before and after in one run: the `bash`
 * tool through Session.call on local and bwrap, from two builds interleaved: this tree's dist and
 * another's (a checkout of the base commit, built), so machine load hits both alike.
 *
 *   node --expose-gc bench/bwrap-before-after.mjs --before=/path/to/base/dist [--iterations=N]
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compare, textOf } from "./lib.mjs";

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt;
const iterations = Number(arg("iterations", 200));
const builds = { before: arg("before"), after: new URL("../dist", import.meta.url).pathname };
const dir = mkdtempSync(join(tmpdir(), "keel-bench-ba-"));
const root = join(dir, "ws");
mkdirSync(root);
const sessions = {};
try {
	for (const [label, dist] of Object.entries(builds)) {
		const { createSession } = await import(`${dist}/index.js`);
		const { createBwrapBackend } = await import(`${dist}/backend/bwrap.js`);
		sessions[`local ${label}`] = await createSession({ root, spillDir: join(dir, "spill") });
		sessions[`bwrap ${label}`] = await createSession({
			root,
			spillDir: join(dir, "spill"),
			backend: createBwrapBackend({ roots: [root] }),
		});
	}
	const run = (s) => async () => {
		const r = await s.call("bash", { command: "true" });
		if (!r.ok || textOf(r) !== "(no output)") throw new Error(`bash failed: ${JSON.stringify(r)}`);
	};
	// Older than the protected-set cache's racy window, as a workspace between commands is.
	await new Promise((r) => setTimeout(r, 2500));
	const res = await compare({
		name: "bash `true`",
		iterations,
		warmup: 10,
		contenders: Object.entries(sessions).map(([label, s]) => ({ label, run: run(s) })),
	});
	const rows = Object.entries(res.stats).map(
		([label, st]) => `| ${label} | ${st.n} | ${st.median.toFixed(2)} | ${st.p95.toFixed(2)} |`,
	);
	const m = (l) => res.stats[l].median;
	process.stdout.write(
		`| contender | N | median (ms) | p95 (ms) |\n| --- | --- | --- | --- |\n${rows.join("\n")}\n\n` +
			`- bwrap over local: before +${(m("bwrap before") - m("local before")).toFixed(2)} ms, after +${(m("bwrap after") - m("local after")).toFixed(2)} ms\n` +
			`- local after/before: ${(m("local after") / m("local before")).toFixed(2)}×; bwrap after/before: ${(m("bwrap after") / m("bwrap before")).toFixed(2)}×\n`,
	);
} finally {
	for (const s of Object.values(sessions)) await s.close();
	rmSync(dir, { recursive: true, force: true });
}
