/**
 * System calls and thread-pool hops per `edit` of one line in a ~1.8 KB file, counted
 * with strace on a child process that runs N edits through Session.call after a warm-up. Calls of
 * the main thread and of libuv's pool threads are counted apart: every pool call is (about) one
 * hop from the event loop to the pool and back. futex, epoll and eventfd wake-ups (the hops'
 * own plumbing) and the markers are left out.
 *
 * Run after `npm run build`: node bench/edit-syscalls.mjs [N=100]   (needs strace)
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const N = Number(process.argv[2] ?? 100);
const dist = fileURLToPath(new URL("../dist/index.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "keel-syscalls-"));
const child = join(dir, "child.mjs");
writeFileSync(
	child,
	`import { writeFileSync } from "node:fs";
const { createSession } = await import(${JSON.stringify(dist)});
const root = ${JSON.stringify(join(dir, "root"))};
(await import("node:fs")).mkdirSync(root);
const lines = [];
for (let i = 0; i < 40; i++) lines.push(i === 20 ? "export const value = 41;" : "// " + i + " lorem ipsum dolor sit amet consectetur");
writeFileSync(root + "/f.txt", lines.join("\\n") + "\\n");
const s = await createSession({ root });
let cur = "41";
const edit = async () => {
	const next = cur === "41" ? "42" : "41";
	const r = await s.call("edit", { path: "f.txt", edits: [{ oldText: "value = " + cur, newText: "value = " + next }] });
	if (!r.ok) throw new Error(r.error.message);
	cur = next;
};
for (let i = 0; i < 20; i++) await edit();
writeFileSync("/dev/null", "KEEL-MARK-START");
for (let i = 0; i < ${N}; i++) await edit();
writeFileSync("/dev/null", "KEEL-MARK-END");
await s.close();
`,
);
const trace = join(dir, "trace.txt");
try {
	execFileSync("strace", ["-f", "-qq", "-o", trace, process.execPath, child], { stdio: "inherit" });
	const lines = readFileSync(trace, "utf8").split("\n");
	const main = Number(lines[0].split(" ")[0]);
	const counts = new Map();
	let on = false;
	const wakeFds = new Set();
	for (const l of lines) {
		if (l.includes("KEEL-MARK-START")) {
			on = true;
			continue;
		}
		if (l.includes("KEEL-MARK-END")) break;
		const m = /^(\d+)\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]/.exec(l);
		if (!on || !m || l.includes("resumed>")) continue;
		const [pid, name] = [Number(m[1]), m[2]];
		if (/^(futex|epoll_|mprotect|madvise|mmap|munmap|brk|rt_sig)/.test(name)) continue;
		// eventfd reads and writes: the pool telling the loop a job is done.
		if (name === "read" || name === "write") {
			const fd = /^\d+\s+[a-z]+\((\d+),/.exec(l)?.[1];
			if (l.includes('"\\1\\0\\0\\0\\0\\0\\0\\0"')) wakeFds.add(fd);
			if (wakeFds.has(fd)) continue;
		}
		const key = `${name}|${pid === main ? "main" : "pool"}`;
		counts.set(key, (counts.get(key) ?? 0) + 1);
	}
	const names = [...new Set([...counts.keys()].map((k) => k.split("|")[0]))].sort();
	const per = (k) => ((counts.get(k) ?? 0) / N).toFixed(2).replace(/\.00$/, "");
	const rows = names.map((n) => `| ${n} | ${per(`${n}|main`)} | ${per(`${n}|pool`)} |`);
	const total = (where) =>
		([...counts].filter(([k]) => k.endsWith(where)).reduce((a, [, v]) => a + v, 0) / N).toFixed(2);
	console.log(`System calls per edit (mean of ${N} edits after 20 warm-up edits):\n`);
	console.log("| call | main thread | thread pool |\n| --- | --- | --- |");
	console.log(rows.join("\n"));
	console.log(`| **total** | **${total("|main")}** | **${total("|pool")}** (≈ pool hops) |`);
} finally {
	rmSync(dir, { recursive: true, force: true });
}
