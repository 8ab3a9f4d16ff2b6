/**
 * SSH on a loopback sshd (the test fixture's: its own host key and config on 127.0.0.1): keel's
 * ssh backend against the approach of pi's examples/extensions/ssh.ts, one `ssh host cmd` process
 * per operation.
 *
 * keel goes through `Session.call` on an ssh backend: one connection; a python3 file helper on the
 * host (resolution, stat and read in one request; the durable write in one), a python3 command
 * runner (one request per command), SFTP for large files. The peer spawns `ssh` per
 * operation, and is given its cheapest form: read = `ssh host cat file`; edit = `ssh host cat file`,
 * the replacement in JS, then `ssh host 'cat > file'` with the new bytes on stdin; bash =
 * `ssh host 'cd dir && cmd'`. (pi's example itself makes three ssh calls per read — `test -r`,
 * `file --mime-type`, `cat` — and three per edit, so the real gap is larger than shown here.)
 *
 * Login files: every `ssh host cmd` runs `$SHELL -c cmd` on the server, and Debian's bash sources
 * ~/.bashrc for commands that come over ssh, so the peer pays the remote user's ~/.bashrc on every
 * call; keel pays it once per channel, at connect. The second variant of each case wraps the
 * peer's command in `bash --norc --noprofile -c` — which, measured here, does not help: the outer
 * login shell has already sourced ~/.bashrc before it runs the wrapper. Both are reported.
 *
 * Run alone: `npm run build && node bench/cases-ssh.mjs [--quick]`, or in `npm run bench` once
 * "./cases-ssh.mjs" is listed in run.mjs's AREAS.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transformWithOxc } from "vite";
import { SshConnection } from "../dist/backend/ssh/connection.js";
import { createSshBackend } from "../dist/backend/ssh/index.js";
import { CommandRunner } from "../dist/backend/ssh/run-client.js";
import { sftpStat } from "../dist/backend/ssh/sftp-io.js";
import { HelperShell, JobShell } from "../dist/backend/ssh/shell.js";
import { createSession } from "../dist/index.js";
import {
	assert,
	FLOOR,
	markdownTable,
	runAreaStandalone,
	smallText,
	spawnOutput,
	textOf,
	toggler,
} from "./lib.mjs";

export const area = "ssh";
export const title = "SSH on a loopback sshd: keel's ssh backend vs one `ssh host cmd` per operation";
export const candidate = "keel";
export const baseline = "ssh per call";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The test fixture is TypeScript; compile it (it imports only node built-ins) into `dir`. */
export async function loadFixture(dir) {
	const src = join(REPO, "test", "fixtures", "sshd.ts");
	const { code } = await transformWithOxc(readFileSync(src, "utf8"), src, { lang: "ts" });
	const out = join(dir, "sshd-fixture.mjs");
	writeFileSync(out, code);
	return import(pathToFileURL(out).href);
}

/** One ssh process: resolves with stdout, rejects on a non-zero exit. */
function ssh(args, command, stdin) {
	return spawnOutput("ssh", [...args, command], stdin, "ssh");
}

const q = (s) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * @param {{dir: string}} env  a fresh local temp directory owned by this area
 */
export async function setup({ dir }) {
	const { startSshd, sshOptions, sshArgv } = await loadFixture(dir);
	const sshd = await startSshd();
	// The "remote" workspace: the server is this machine, so a local temp dir is a remote dir.
	const root = join(dir, "remote");
	mkdirSync(root, { recursive: true });
	const small = smallText();
	const files = { read: "read-small.txt", editKeel: "edit-keel.txt", editPeer: "edit-peer.txt" };
	for (const f of Object.values(files)) writeFileSync(join(root, f), small);

	const backend = createSshBackend(sshOptions(sshd));
	const session = await createSession({ root, backend });
	const keel = async (tool, args) => {
		const r = await session.call(tool, args);
		if (!r.ok) throw new Error(`keel ${tool} failed: ${r.error.code}: ${r.error.message}`);
		return r;
	};
	const sshArgs = sshArgv(sshd).slice(1);
	const variants = [
		{ name: "login shell", wrap: (cmd) => cmd },
		{ name: "bash --norc -c", wrap: (cmd) => `bash --norc --noprofile -c ${q(cmd)}` },
	];

	// The floors, on a connection of their own to the same sshd: read, one request to the file
	// helper (an lstat: one round trip, no process); bash, one request to a persistent shell that
	// starts no process (one exec-channel round trip); edit, that request plus the durable write of
	// the same bytes in one request (the least a checked, durable write can take: the file helper's
	// k_put of an unconditional replace). The three bare round trips (SFTP, exec channel, helper)
	// are timed again, interleaved, at teardown.
	const floorConn = new SshConnection(sshOptions(sshd));
	const floorLive = await floorConn.get();
	const floorFile = join(root, "floor.txt");
	writeFileSync(floorFile, small);
	const fast = floorLive.py ?? floorLive.helper;
	const floorSftp = () => sftpStat(floorLive.sftp, join(root, files.read));
	const floorHelper = async () => {
		const r = await fast.request("k_lstat", join(root, files.read));
		assert(r.status === 0, "floor: helper round trip");
	};
	const floorChannel = async () => {
		const r = await floorLive.helper.request("true");
		assert(r.status === 0, "floor: channel round trip");
	};
	const floorWrite = async () => {
		await floorHelper();
		const tmp = join(root, `.keel-tmp-${process.pid}-000000000000-floor.txt`);
		const b64 = Buffer.from(small).toString("base64");
		const r = await fast.request("k_put", floorFile, tmp, root, "644", "swap", "", "", b64);
		assert(r.status === 0 && r.out.startsWith("moved"), `floor: durable write: ${r.out}`);
	};

	const cases = [];
	const keelEdit = toggler();
	const peerEditNext = toggler();
	for (const v of variants) {
		const peerRead = (name) => ssh(sshArgs, v.wrap(`cat ${q(join(root, name))}`));
		const peerEdit = async () => {
			const { oldText, newText } = peerEditNext();
			const text = (await peerRead(files.editPeer)).toString("utf8");
			assert(text.split(oldText).length === 2, "peer edit: the anchor must occur once");
			await ssh(sshArgs, v.wrap(`cat > ${q(join(root, files.editPeer))}`), text.replace(oldText, newText));
		};
		cases.push(
			{
				name: `read, small file (2 KB) — peer: ${v.name}`,
				iterations: 100,
				warmup: 5,
				async check() {
					const k = textOf(await keel("read", { path: files.read }));
					const p = (await peerRead(files.read)).toString("utf8");
					assert(k === p.replace(/\n$/, ""), "read: keel and ssh cat differ");
				},
				contenders: [
					{ label: "keel", run: () => keel("read", { path: files.read }) },
					{ label: "ssh per call", run: () => peerRead(files.read) },
					{ label: FLOOR, run: floorHelper },
				],
			},
			{
				name: `edit, one change in the small file — peer: ${v.name}`,
				iterations: 100,
				warmup: 5,
				contenders: [
					{ label: "keel", run: () => keel("edit", { path: files.editKeel, edits: [keelEdit()] }) },
					{ label: "ssh per call", run: peerEdit },
					{ label: FLOOR, run: floorWrite },
				],
				after() {
					for (const f of [files.editKeel, files.editPeer]) {
						assert(readFileSync(join(root, f), "utf8").length === small.length, `${f}: size drifted`);
					}
				},
			},
			{
				name: `bash, \`echo hello\` — peer: ${v.name}`,
				iterations: 100,
				warmup: 5,
				async check() {
					assert(textOf(await keel("bash", { command: "echo hello" })).trim() === "hello", "keel bash");
				},
				contenders: [
					{ label: "keel", run: () => keel("bash", { command: "echo hello" }) },
					{ label: "ssh per call", run: () => ssh(sshArgs, v.wrap(`cd ${q(root)} && echo hello`)) },
					{ label: FLOOR, run: floorChannel },
				],
			},
		);
	}
	return {
		cases,
		async teardown() {
			try {
				const bashStart = async () => {
					const r = await floorLive.helper.request("bash", "--norc", "--noprofile", "-c", "echo hello");
					assert(r.status === 0 && r.out === "hello\n", "floor: bash start");
				};
				floorsTable = await timeFloors({
					sftp: floorSftp,
					channel: floorChannel,
					helper: floorHelper,
					bash: bashStart,
				});
				tripsTable = await countRoundTrips(keel, files.editKeel, keelEdit);
			} finally {
				await floorConn.close();
				await session.close();
				await sshd.stop();
			}
		},
	};
}

/** The round-trip table, counted at teardown (the connection is still open then). */
let tripsTable = "";
/** The bare round trips, timed at teardown. */
let floorsTable = "";

export function report() {
	return `${floorsTable}\n\n${tripsTable}`;
}

/**
 * The bare round trips (and one that starts bash on the host: what a command cannot avoid),
 * interleaved, N=300 each, with the load average before and after.
 */
async function timeFloors(floors) {
	const load = () => readFileSync("/proc/loadavg", "utf8").trim();
	const before = load();
	const samples = Object.fromEntries(Object.keys(floors).map((k) => [k, []]));
	for (let i = 0; i < 300; i++) {
		for (const [k, run] of Object.entries(floors)) {
			const t0 = performance.now();
			await run();
			samples[k].push(performance.now() - t0);
		}
	}
	const at = (a, q) => a[Math.min(a.length - 1, Math.floor(a.length * q))].toFixed(3);
	const rows = Object.entries(samples).map(([k, a]) => {
		a.sort((x, y) => x - y);
		return [k, at(a, 0.5), at(a, 0.9)];
	});
	const names = {
		sftp: "one SFTP request (stat)",
		channel: "one exec-channel round trip (a shell request that starts nothing)",
		helper: "one file helper request (lstat)",
		bash: "one shell request that starts `bash --norc --noprofile -c 'echo hello'` on the host",
	};
	return `Bare round trips on the same sshd, interleaved, N=300 (load ${before} before, ${load()} after):\n\n${markdownTable(
		["round trip", "median (ms)", "p90 (ms)"],
		rows.map(([k, m, p]) => [names[k], m, p]),
	)}`;
}

/**
 * Requests and round trips per tool call, counted by wrapping (in this process only, after the
 * timing) the SFTP client's requests, the helpers' requests and the job shells' jobs. A round
 * trip is one step of the critical path: a request sent after another's answer came back is one
 * trip further; requests in flight together share a trip.
 */
async function countRoundTrips(keel, editFile, nextEdit) {
	const { SFTP } = createRequire(join(REPO, "package.json"))("ssh2/lib/protocol/SFTP.js");
	const methods = ["open", "close", "read", "write", "fchmod", "ext_openssh_fsync", "ext_openssh_hardlink"];
	methods.push("unlink", "rmdir", "readlink", "realpath", "stat", "lstat", "readdir", "fstat");
	let counts;
	let done = 0;
	const step = (kind) => {
		if (!counts) return () => {};
		counts[kind]++;
		const depth = done + 1;
		return () => {
			done = Math.max(done, depth);
		};
	};
	const saved = [];
	const wrap = (proto, name, fn) => {
		saved.push([proto, name, proto[name]]);
		proto[name] = fn(proto[name]);
	};
	for (const m of methods) {
		wrap(
			SFTP.prototype,
			m,
			(orig) =>
				function (...args) {
					const fin = step("sftp");
					const cb = args[args.length - 1];
					if (typeof cb === "function")
						args[args.length - 1] = (...r) => {
							fin();
							cb(...r);
						};
					return orig.apply(this, args);
				},
		);
	}
	wrap(
		HelperShell.prototype,
		"request",
		(orig) =>
			function (...args) {
				const fin = step("helper");
				return orig.apply(this, args).finally(fin);
			},
	);
	/** Count one `kind` step per job `proto.start` takes, ending when the job is done. */
	const countJobs = (proto, kind) =>
		wrap(
			proto,
			"start",
			(orig) =>
				function (job) {
					const fin = step(kind);
					const onDone = job.onDone;
					return orig.call(this, {
						...job,
						onDone: (i) => {
							fin();
							onDone(i);
						},
					});
				},
		);
	countJobs(JobShell.prototype, "job");
	countJobs(CommandRunner.prototype, "runner");
	const ops = [
		["read, small file", () => keel("read", { path: "read-small.txt" })],
		[
			"edit, one change",
			async () => {
				await keel("read", { path: editFile });
				counts = undefined; // the read before the edit is not counted
				const c = { sftp: 0, helper: 0, job: 0, runner: 0 };
				counts = c;
				done = 0;
				await keel("edit", { path: editFile, edits: [nextEdit()] });
			},
		],
		["bash `echo hello`", () => keel("bash", { command: "echo hello" })],
	];
	const rows = [];
	try {
		for (const [name, run] of ops) {
			counts = { sftp: 0, helper: 0, job: 0, runner: 0 };
			done = 0;
			await run();
			rows.push([
				name,
				String(counts.sftp),
				String(counts.helper),
				String(counts.job),
				String(counts.runner),
				String(done),
			]);
			counts = undefined;
		}
	} finally {
		for (const [proto, name, orig] of saved.reverse()) proto[name] = orig;
	}
	return `Requests and round trips per call (counted after the timing, bench/cases-ssh.mjs):\n\n${markdownTable(
		["call", "SFTP requests", "helper requests", "job shell jobs", "runner requests", "round trips"],
		rows,
	)}`;
}

// Standalone: node bench/cases-ssh.mjs [--quick]
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	await runAreaStandalone({ area, title, candidate, baseline, setup, report });
}
