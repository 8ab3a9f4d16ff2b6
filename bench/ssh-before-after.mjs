/**
 * Before and after in one run: `bash echo hello` and `read` of a 2 KB file
 * through Session.call on the ssh backend, from two builds interleaved (this tree's dist and
 * another's: a checkout of the base commit, built), each with its own connection to one loopback
 * sshd (the test fixture's), with the bare round trips (one shell helper request, one file helper
 * lstat) timed in the same rotation, so machine load hits all alike. Also each build's k_look (the
 * read's one request to the file helper) on a connection of its own, without the tool layer.
 *
 *   npm run build && node bench/ssh-before-after.mjs --before=/path/to/base/dist [--iterations=N]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadFixture } from "./cases-ssh.mjs";
import { assert, compare, markdownTable, smallText, textOf } from "./lib.mjs";

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt;
const iterations = Number(arg("iterations", 300));
const builds = { before: arg("before"), after: new URL("../dist", import.meta.url).pathname };
assert(builds.before, "--before=DIST is required");
const load = () => readFileSync("/proc/loadavg", "utf8").trim();

const dir = mkdtempSync(join(tmpdir(), "keel-bench-ssh-ba-"));
const { startSshd, sshOptions } = await loadFixture(dir);
const sshd = await startSshd();
const root = join(dir, "remote");
mkdirSync(root);
writeFileSync(join(root, "small.txt"), smallText());
const sessions = {};
let floorConn;
const conns = [];
try {
	for (const [label, dist] of Object.entries(builds)) {
		const { createSession } = await import(`${dist}/index.js`);
		const { createSshBackend } = await import(`${dist}/backend/ssh/index.js`);
		sessions[label] = await createSession({ root, backend: createSshBackend(sshOptions(sshd)) });
	}
	// Each build's own file helper, bare: the read's one request without the tool layer.
	const helpers = {};
	for (const [label, dist] of Object.entries(builds)) {
		const { SshConnection } = await import(`${dist}/backend/ssh/connection.js`);
		const conn = new SshConnection(sshOptions(sshd));
		conns.push(conn);
		helpers[label] = (await conn.get()).py;
	}
	const { SshConnection } = await import(`${builds.after}/backend/ssh/connection.js`);
	floorConn = new SshConnection(sshOptions(sshd));
	const floorLive = await floorConn.get();
	const lookOf = (h) => async () => {
		const r = await h.request("k_look", join(root, "small.txt"), String(256 * 1024));
		assert(r.status === 0 && r.bytes.length > 1000, "k_look failed");
	};
	const bash = (label) => async () => {
		const r = await sessions[label].call("bash", { command: "echo hello" });
		assert(r.ok && textOf(r).trim() === "hello", `bash failed: ${JSON.stringify(r)}`);
	};
	const read = (label) => async () => {
		const r = await sessions[label].call("read", { path: "small.txt" });
		assert(r.ok && textOf(r).includes("lorem"), `read failed: ${JSON.stringify(r)}`);
	};
	const before = load();
	const results = [];
	for (const [name, op, floor] of [
		["bash `echo hello`", bash, () => floorLive.helper.request("true")],
		["read, small file (2 KB)", read, () => floorLive.py.request("k_lstat", join(root, "small.txt"))],
		[
			"the read's k_look request, bare",
			(label) => lookOf(helpers[label]),
			() => floorLive.py.request("k_lstat", join(root, "small.txt")),
		],
	]) {
		results.push(
			await compare({
				name,
				iterations,
				warmup: 10,
				contenders: [
					{ label: "before", run: op("before") },
					{ label: "after", run: op("after") },
					{ label: "floor", run: floor },
				],
			}),
		);
	}
	const f = (x) => x.toFixed(3);
	const rows = results.map((r) => {
		const [b, a, fl] = ["before", "after", "floor"].map((k) => r.stats[k]);
		return [
			r.name,
			String(r.iterations),
			f(b.median),
			f(a.median),
			f(fl.median),
			f(b.median - fl.median),
			f(a.median - fl.median),
			`${(a.median / b.median).toFixed(2)}×`,
		];
	});
	process.stdout.write(
		`\`node bench/ssh-before-after.mjs --iterations=${iterations}\`, load ${before} before, ${load()} after:\n\n${markdownTable(
			[
				"case",
				"N",
				"before median (ms)",
				"after median (ms)",
				"floor median (ms)",
				"before − floor",
				"after − floor",
				"after/before",
			],
			rows,
		)}\n`,
	);
} finally {
	for (const s of Object.values(sessions)) await s.close();
	await floorConn?.close();
	for (const c of conns) await c.close();
	await sshd.stop();
	rmSync(dir, { recursive: true, force: true });
}
