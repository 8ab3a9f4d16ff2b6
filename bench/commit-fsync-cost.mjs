/**
 * What keel's durability steps cost a commit: an apply_patch over five small files (a journaled
 * multi-file change) and a single `edit`, keel built from this checkout against keel built from
 * another checkout (--before=REPO, e.g. a worktree of the commit before the change), interleaved
 * in one run. Each side gets its own workspace and state directory under --dir (default: a temp
 * directory; give one on the disk you care about: fsync costs nothing on tmpfs).
 *
 *   node bench/commit-fsync-cost.mjs --before=/tmp/keel-before [--iterations=40] [--dir=/var/tmp]
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compare, comparisonTable } from "./lib.mjs";

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt;
const before = arg("before");
if (!before) throw new Error("give --before=REPO, a checkout of keel from before the change");
const iterations = Number(arg("iterations", "40"));
const here = resolve(fileURLToPath(new URL("..", import.meta.url)));
const work = mkdtempSync(join(arg("dir", tmpdir()), "keel-fsync-cost-"));

/** keel's Session from `repo`'s src/, bundled into one module (as the durability tests do). */
async function bundleOf(repo, label) {
	const { rolldown } = await import("rolldown");
	const out = join(work, `${label}.mjs`);
	const bundle = await rolldown({
		input: join(repo, "src", "session.ts"),
		platform: "node",
		logLevel: "silent",
	});
	await bundle.write({ file: out, format: "esm", codeSplitting: false });
	await bundle.close();
	try {
		symlinkSync(join(here, "node_modules"), join(work, "node_modules"));
	} catch {}
	return import(pathToFileURL(out).href);
}

const patch = (...body) => ["*** Begin Patch", ...body, "*** End Patch", ""].join("\n");

async function side(label, keel) {
	const root = join(work, label, "root");
	mkdirSync(root, { recursive: true });
	for (let j = 0; j < 5; j++) writeFileSync(join(root, `f${j}.txt`), `file ${j} v0\n`);
	writeFileSync(join(root, "one.txt"), "single v0\n");
	const stateDir = join(work, label, "state");
	const uni = await keel.createSession({ root, stateDir, profile: "unified" });
	const pi = await keel.createSession({ root, stateDir, profile: "pi" });
	if (!(await pi.call("read", { path: "one.txt" })).ok) throw new Error("read failed");
	let v = 0;
	let w = 0;
	return {
		patch: async () => {
			const body = [];
			for (let j = 0; j < 5; j++)
				body.push(`*** Update File: f${j}.txt`, "@@", `-file ${j} v${v}`, `+file ${j} v${v + 1}`);
			const r = await uni.call("apply_patch", { input: patch(...body) });
			if (!r.ok) throw new Error(JSON.stringify(r.error));
			v++;
		},
		edit: async () => {
			const r = await pi.call("edit", {
				path: "one.txt",
				edits: [{ oldText: `v${w}`, newText: `v${w + 1}` }],
			});
			if (!r.ok) throw new Error(JSON.stringify(r.error));
			w++;
		},
		close: async () => {
			await uni.close();
			await pi.close();
		},
	};
}

const after = await side("after", await bundleOf(here, "after"));
const prior = await side("before", await bundleOf(resolve(before), "before"));
const results = [];
for (const kind of ["patch", "edit"]) {
	results.push(
		await compare({
			name: kind === "patch" ? "apply_patch, 5 small files" : "edit, one file",
			iterations,
			warmup: 5,
			contenders: [
				{ label: "after", run: after[kind] },
				{ label: "before", run: prior[kind] },
			],
		}),
	);
}
await after.close();
await prior.close();
console.log(comparisonTable(results, { candidate: "after", baseline: "before" }));
console.log(
	`\nload average ${loadavg()
		.map((l) => l.toFixed(1))
		.join(" ")}; dir ${work}`,
);
rmSync(work, { recursive: true, force: true });
