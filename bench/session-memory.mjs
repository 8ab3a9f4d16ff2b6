/**
 * Memory after sessions close: rounds of 32 concurrent sessions on one workspace
 * (shared queue registry, as the MCP server has), each reading, grepping, running a command with
 * output and editing, then closing. Prints RSS and JS heap after a forced GC.
 * Run after `npm run build`: node --expose-gc bench/session-memory.mjs
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QueueRegistry } from "../dist/safety/mutation-queue.js";
import { Session } from "../dist/session.js";

const SESSIONS = 32;
const root = await mkdtemp(join(tmpdir(), "keel-mem-"));
for (let i = 0; i < SESSIONS; i++) await writeFile(join(root, `f${i}.txt`), `line ${i}\n`);
const queues = new QueueRegistry();
const usage = () => {
	global.gc();
	global.gc();
	const m = process.memoryUsage();
	return `rss ${Math.round(m.rss / 1e6)} MB, heap ${Math.round(m.heapUsed / 1e6)} MB, external ${Math.round(m.external / 1e6)} MB`;
};

async function round() {
	const sessions = await Promise.all(
		Array.from({ length: SESSIONS }, () => Session.create({ root, queues, profile: "unified" })),
	);
	await Promise.all(
		sessions.map(async (s, i) => {
			await s.call("read", { path: `f${i}.txt` });
			await s.call("grep", { pattern: "line" });
			await s.call("bash", { command: "seq 1 20000" });
			const edit = (a, b) =>
				s.call("file", {
					queries: [{ type: "edit", path: `f${i}.txt`, edits: [{ oldText: a, newText: b }] }],
				});
			await edit("line", `line${i}`);
			await edit(`line${i}`, "line");
		}),
	);
	await Promise.all(sessions.map((s) => s.close()));
}

console.log(`start: ${usage()}`);
for (let r = 1; r <= 20; r++) {
	await round();
	if ([1, 5, 10, 20].includes(r))
		console.log(`after ${r} round(s) of ${SESSIONS} sessions: ${usage()}; live queues ${queues.size}`);
}
await rm(root, { recursive: true, force: true });
