/**
 * What keeping attributes costs an exec-backend edit: the built keel (./dist) against an older
 * build given with --before=DIR (a copy of dist from before the change, with node_modules beside
 * it), interleaved in one run, on a file without attributes and on one with user attributes.
 * Transports: a spawn per call on this machine, and (with KEEL_TEST_PODMAN) the podman container.
 *
 *   npm run build && node bench/exec-replace-cost.mjs --before=/tmp/keel-before/dist [--iterations=60]
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { compare, fmtMs } from "./lib.mjs";

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt;
const before = arg("before");
if (!before) throw new Error("give --before=DIR, a build of keel from before the change");
const iterations = Number(arg("iterations", "60"));

const spawnTransport = (argv, o) =>
	new Promise((done, fail) => {
		const c = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
		c.stdin.on("error", () => {});
		c.stdin.end(o.stdin instanceof Uint8Array ? o.stdin : undefined);
		c.stdout.on("data", (d) => o.onData?.(d, "stdout"));
		c.stderr.on("data", (d) => o.onData?.(d, "stderr"));
		c.on("error", fail);
		c.on("close", (code) => done({ exitCode: code }));
	});

async function build(dist, label, transportKind, root) {
	const url = (p) => pathToFileURL(join(resolve(dist), p)).href;
	const { createSession } = await import(url("index.js"));
	let backend;
	if (transportKind === "spawn") {
		const { createExecBackend } = await import(url("backend/exec/index.js"));
		backend = createExecBackend({ transport: spawnTransport });
	} else {
		const { createContainerBackend, engineTarget } = await import(url("backend/container/index.js"));
		backend = createContainerBackend(
			engineTarget({ engine: "podman", container: process.env.KEEL_TEST_PODMAN }),
		);
	}
	const session = await createSession({ root, backend, stateDir: join(root, "..", `state-${label}`) });
	return session;
}

function setUserAttrs(p) {
	execFileSync("/usr/bin/python3", [
		"-c",
		"import os,sys\nfor i in range(3): os.setxattr(sys.argv[1], 'user.k%d' % i, b'v' * 100)",
		p,
	]);
}

const work = mkdtempSync(join(tmpdir(), "keel-bench-exec-replace-"));
try {
	const kinds = ["spawn", ...(process.env.KEEL_TEST_PODMAN ? ["podman"] : [])];
	console.log(
		`load before: ${loadavg()
			.map((l) => l.toFixed(2))
			.join(" ")}`,
	);
	for (const kind of kinds) {
		const root = join(work, kind, "root");
		execFileSync("mkdir", ["-p", root]);
		const sides = [
			["before", before],
			["after", "dist"],
		];
		const contenders = [];
		for (const [label, dist] of sides) {
			const s = await build(dist, label, kind, root);
			for (const attrs of [false, true]) {
				const name = `${label}-${attrs ? "attrs" : "plain"}.txt`;
				const p = join(root, name);
				writeFileSync(p, `${"line of text\n".repeat(100)}value = 0\n`);
				if (attrs) setUserAttrs(p);
				let n = 0;
				contenders.push({
					label: `${label}, ${attrs ? "with attributes" : "no attributes"}`,
					run: async () => {
						const r = await s.call("edit", {
							path: name,
							edits: [{ oldText: `value = ${n}`, newText: `value = ${n + 1}` }],
						});
						if (!r.ok) throw new Error(`${label} edit failed: ${r.error.code} ${r.error.message}`);
						n++;
					},
				});
			}
		}
		const res = await compare({ name: `edit over ${kind}`, iterations, warmup: 5, contenders });
		console.log(`\n${res.name} (${iterations} iterations, medians)`);
		const base = res.stats["before, no attributes"].median;
		for (const [label, st] of Object.entries(res.stats)) {
			console.log(
				`  ${label}: ${fmtMs(st.median)} ms (${(st.median / base).toFixed(2)}× before, no attributes)`,
			);
		}
	}
	console.log(
		`\nload after: ${loadavg()
			.map((l) => l.toFixed(2))
			.join(" ")}`,
	);
} finally {
	rmSync(work, { recursive: true, force: true });
	process.exit(0);
}
