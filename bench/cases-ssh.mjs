/**
 * SSH on a loopback sshd (the test fixture's: its own host key and config on 127.0.0.1): keel's
 * ssh backend against the approach of pi's examples/extensions/ssh.ts, one `ssh host cmd` process
 * per operation.
 *
 * keel goes through `Session.call` on an ssh backend: one connection, SFTP for bytes, a helper
 * shell for identity and commits, persistent shells for commands. The peer spawns `ssh` per
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
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transformWithOxc } from "vite";
import { createSshBackend } from "../dist/backend/ssh/index.js";
import { Session } from "../dist/index.js";
import { assert, compare, comparisonTable, textOf } from "./lib.mjs";

export const area = "ssh";
export const title = "SSH on a loopback sshd: keel's ssh backend vs one `ssh host cmd` per operation";
export const candidate = "keel";
export const baseline = "ssh per call";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The test fixture is TypeScript; compile it (it imports only node built-ins) into `dir`. */
async function loadFixture(dir) {
	const src = join(REPO, "test", "fixtures", "sshd.ts");
	const { code } = await transformWithOxc(readFileSync(src, "utf8"), src, { lang: "ts" });
	const out = join(dir, "sshd-fixture.mjs");
	writeFileSync(out, code);
	return import(pathToFileURL(out).href);
}

/** One ssh process: resolves with stdout, rejects on a non-zero exit. */
function ssh(args, command, stdin) {
	return new Promise((resolvePromise, reject) => {
		const child = spawn("ssh", [...args, command], { stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"] });
		const out = [];
		const err = [];
		child.stdout.on("data", (c) => out.push(c));
		child.stderr.on("data", (c) => err.push(c));
		child.on("error", reject);
		child.on("close", (code) =>
			code === 0
				? resolvePromise(Buffer.concat(out))
				: reject(new Error(`ssh failed (${code}): ${Buffer.concat(err).toString()}`)),
		);
		if (stdin) child.stdin.end(stdin);
	});
}

/** ~2 KB of code-like text with one `value = 41` line (as in cases-local). */
function smallText() {
	const lines = [];
	for (let i = 0; i < 40; i++) {
		lines.push(
			i === 20
				? "export const value = 41; // the line the edit changes"
				: `// ${i} lorem ipsum dolor sit amet`,
		);
	}
	return `${lines.join("\n")}\n`;
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
	const session = await Session.create({ root, backend });
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

	/** Each side edits its own copy, toggling 41 ↔ 42, so both always make one real change. */
	const toggler = () => {
		let cur = "41";
		return () => {
			const next = cur === "41" ? "42" : "41";
			const edit = { oldText: `value = ${cur};`, newText: `value = ${next};` };
			cur = next;
			return edit;
		};
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
				],
			},
			{
				name: `edit, one change in the small file — peer: ${v.name}`,
				iterations: 100,
				warmup: 5,
				contenders: [
					{ label: "keel", run: () => keel("edit", { path: files.editKeel, edits: [keelEdit()] }) },
					{ label: "ssh per call", run: peerEdit },
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
				],
			},
		);
	}
	return {
		cases,
		async teardown() {
			await session.close();
			await sshd.stop();
		},
	};
}

// Standalone: node bench/cases-ssh.mjs [--quick]
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	const quick = process.argv.includes("--quick");
	const dir = mkdtempSync(join(tmpdir(), "keel-bench-ssh-"));
	try {
		const { cases, teardown } = await setup({ dir });
		const results = [];
		try {
			for (const c of cases) {
				await c.check?.();
				const iterations = quick ? Math.max(3, Math.round(c.iterations / 10)) : c.iterations;
				const started = Date.now();
				results.push(await compare({ ...c, iterations, warmup: quick ? 1 : c.warmup }));
				c.after?.();
				process.stderr.write(`[ssh] ${c.name}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
			}
		} finally {
			await teardown();
		}
		process.stdout.write(`### ${title}\n\n${comparisonTable(results, { candidate, baseline })}\n`);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
