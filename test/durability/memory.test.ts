/**
 * contentRef copies hold no bytes on the JS heap: a child started with
 * --expose-gc writes a 50 MB payload once through the `file` tool, then copies it to 20 new paths
 * using only the returned contentRef. heapUsed is measured after gc() before and after the copies;
 * the parent asserts the growth is under 10 MB (and likewise for external memory, where Buffers
 * live), that every copy reported ok, and that every copy is byte-identical to the source (SHA-256
 * computed here, from the files on disk).
 */
import { createHash } from "node:crypto";
import { createReadStream, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildKeel, runNode } from "./build-keel.js";

const PAYLOAD_BYTES = 50 * 1024 * 1024;
const COPIES = 20;
const MAX_GROWTH = 10 * 1024 * 1024;

const CHILD_SOURCE = `
import { createHash, randomBytes } from "node:crypto";

const [bundle, root, bytes, copies] = process.argv.slice(2);
const { createSession } = await import(bundle);
// A few full collections, with turns of the event loop between them so finalizers and the
// sweeping of freed buffers complete before the reading.
const settle = async () => {
	for (let i = 0; i < 4; i++) {
		globalThis.gc();
		await new Promise((resolve) => setImmediate(resolve));
	}
	return process.memoryUsage();
};

const s = await createSession({ root, profile: "unified" });

// The payload and every temporary made from it live only in this function's frame, so nothing
// of this script's own keeps them reachable once it returns.
async function writeSource() {
	// 50 MB of text: hex of random bytes, in 64-character lines.
	const content = randomBytes(Number(bytes) / 2).toString("hex").replace(/.{63}/g, "$&\\n");
	const sent = createHash("sha256").update(content, "utf8").digest("hex");
	const sentBytes = Buffer.byteLength(content, "utf8");
	// V8 keeps the subject of the last regexp match (RegExp.input): let it drop the 50 MB hex string.
	/x/.test("x");
	const w = await s.call("file", { queries: [{ type: "write", path: "source.txt", content }] });
	return w.ok ? { sent, sentBytes, ref: w.details.results[0].contentRef } : { writeError: w.error };
}

async function copyAll(ref) {
	const results = [];
	for (let i = 0; i < Number(copies); i++) {
		const r = await s.call("file", { queries: [{ type: "write", path: "copies/copy-" + i + ".txt", contentRef: ref }] });
		results.push(r.ok ? { ok: true, path: r.details.results[0].path } : { ok: false, error: r.error });
	}
	return results;
}

const source = await writeSource();
if (source.writeError) {
	process.stdout.write(JSON.stringify(source) + "\\n");
	process.exit(0);
}
const before = await settle();
const results = await copyAll(source.ref);
const after = await settle();
await s.close();
process.stdout.write(JSON.stringify({ ...source, results, before, after }) + "\\n");
`;

interface Usage {
	heapUsed: number;
	external: number;
	arrayBuffers: number;
	rss: number;
}

interface Report {
	writeError?: unknown;
	sent: string;
	sentBytes: number;
	ref: string;
	results: Array<{ ok: boolean; path?: string; error?: unknown }>;
	before: Usage;
	after: Usage;
}

let work: string;
let root: string;
let script: string;
let bundle: string;

async function sha256File(path: string): Promise<string> {
	const hash = createHash("sha256");
	await pipeline(createReadStream(path), hash);
	return hash.digest("hex");
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MB`;

beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), "keel-memory-"));
	root = join(work, "root");
	await mkdir(root);
	bundle = await buildKeel(work);
	script = join(work, "child.mjs");
	writeFileSync(script, CHILD_SOURCE);
}, 120_000);

afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

describe("contentRef copies of a 50 MB payload", () => {
	it(`copy ${COPIES} times without growing the heap by 10 MB, each copy byte-identical`, async () => {
		const { code, stdout, stderr } = await runNode([
			"--expose-gc",
			script,
			bundle,
			root,
			String(PAYLOAD_BYTES),
			String(COPIES),
		]);
		expect(code, stderr).toBe(0);
		const report = JSON.parse(stdout.trim().split("\n").at(-1)!) as Report;
		expect(report.writeError).toBeUndefined();
		expect(report.sentBytes).toBeGreaterThanOrEqual(PAYLOAD_BYTES);

		// The source on disk is what was sent.
		const source = join(root, "source.txt");
		expect((await stat(source)).size).toBe(report.sentBytes);
		expect(await sha256File(source)).toBe(report.sent);

		// Every copy reported ok, and is byte-identical to the source.
		expect(report.results).toHaveLength(COPIES);
		report.results.forEach((r, i) => {
			expect(r, `copy ${i}`).toEqual({ ok: true, path: `copies/copy-${i}.txt` });
		});
		for (let i = 0; i < COPIES; i++) {
			expect(await sha256File(join(root, "copies", `copy-${i}.txt`)), `copy ${i}`).toBe(report.sent);
		}

		const growth = report.after.heapUsed - report.before.heapUsed;
		console.info(
			`memory: heapUsed ${mb(report.before.heapUsed)} -> ${mb(report.after.heapUsed)} (growth ${mb(growth)}); ` +
				`external ${mb(report.before.external)} -> ${mb(report.after.external)}; ` +
				`rss ${mb(report.before.rss)} -> ${mb(report.after.rss)}`,
		);
		expect(growth).toBeLessThan(MAX_GROWTH);
		// Nor are the bytes held off the heap, in Buffers (external memory).
		expect(report.after.external - report.before.external).toBeLessThan(MAX_GROWTH);
		// And the session did not keep the 50 MB it was sent once the write returned (the rest of the
		// baseline is the loaded code: the whole library, ssh2 included).
		expect(report.before.heapUsed + report.before.external).toBeLessThan(PAYLOAD_BYTES * 0.8);
	}, 180_000);
});
