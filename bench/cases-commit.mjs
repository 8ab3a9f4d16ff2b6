/**
 * keel's durable commit against a plain `fs.writeFile`, and the peak memory of an edit as a
 * multiple of the file's size.
 *
 * The commit is the local backend's `writeFile` with a compare-and-swap expectation: a temp file
 * created with O_EXCL beside the target, written, chmod, fsync; then the target's bytes re-hashed
 * and its identity checked, rename, fsync of the directory. `fs.writeFile` truncates and writes in
 * place with no fsync: the ratio is the price of durability and of the check.
 *
 * Alone, for the memory table: node --expose-gc bench/cases-commit.mjs
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createLocalBackend, createSession } from "../dist/index.js";
import { collectGarbage, markdownTable } from "./lib.mjs";

export const area = "commit";
export const title = "Durable commit (keel) vs plain fs.writeFile";
export const candidate = "keel";
export const baseline = "writeFile";

/** Two same-size versions and their hashes, so every iteration is a real overwrite. */
function versions(bytes) {
	return ["a\n", "b\n"].map((fill) => {
		const data = Buffer.alloc(bytes, fill);
		return { data, sha256: createHash("sha256").update(data).digest("hex") };
	});
}

function commitCase(fs, dir, name, bytes, iterations, warmup) {
	const [a, b] = versions(bytes);
	const keelPath = join(dir, `keel-${bytes}.txt`);
	const plainPath = join(dir, `plain-${bytes}.txt`);
	writeFileSync(keelPath, a.data);
	writeFileSync(plainPath, a.data);
	let keel; // { stat, version } of the file as keel last committed it
	let plainNext = b;
	return {
		name,
		iterations,
		warmup,
		async check() {
			keel = { stat: await fs.lstat(keelPath), version: a };
		},
		contenders: [
			{
				label: "keel",
				run: async () => {
					const next = keel.version === a ? b : a;
					const stat = await fs.writeFile(keelPath, next.data, {
						expect: { stat: keel.stat, sha256: keel.version.sha256 },
					});
					keel = { stat, version: next };
				},
			},
			{
				label: "writeFile",
				run: async () => {
					await writeFile(plainPath, plainNext.data);
					plainNext = plainNext === a ? b : a;
				},
			},
		],
	};
}

export async function setup({ dir }) {
	const fs = createLocalBackend().fs;
	return {
		cases: [
			commitCase(fs, dir, "overwrite a 4 KB file", 4096, 200, 20),
			commitCase(fs, dir, "overwrite a 10 MB file", 10 * 1024 * 1024, 20, 3),
		],
		teardown: async () => {},
	};
}

/**
 * Peak memory of one edit (pi `edit` tool through Session.call) as a multiple of the file size:
 * a sampler records heapUsed + arrayBuffers every millisecond during the call, over a baseline
 * taken after a full GC.
 */
export async function report() {
	return `Peak memory of one pi-profile \`edit\` through Session.call (heapUsed + arrayBuffers sampled every ms, over a baseline after a full GC):\n\n${await heapPerEdit()}`;
}

export async function heapPerEdit(sizes = [1, 10, 50].map((mb) => mb * 1024 * 1024)) {
	const dir = mkdtempSync(join(tmpdir(), "keel-bench-heap-"));
	const rows = [];
	try {
		const session = await createSession({ root: dir });
		for (const size of sizes) {
			const line = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor\n";
			const body = line.repeat(Math.floor(size / line.length));
			writeFileSync(join(dir, "f.txt"), `${body}MARKER = 1\n`);
			let peak = 0;
			await collectGarbage();
			const used = () => {
				const m = process.memoryUsage();
				return m.heapUsed + m.arrayBuffers;
			};
			const base = used();
			const timer = setInterval(() => {
				peak = Math.max(peak, used() - base);
			}, 1);
			const r = await session.call("edit", {
				path: "f.txt",
				edits: [{ oldText: "MARKER = 1", newText: "MARKER = 2" }],
			});
			peak = Math.max(peak, used() - base);
			clearInterval(timer);
			if (!r.ok) throw new Error(r.error.message);
			rows.push([
				`${(size / 1024 / 1024).toFixed(0)} MB`,
				`${(peak / 1024 / 1024).toFixed(1)} MB`,
				`${(peak / size).toFixed(1)}×`,
			]);
		}
		await session.close();
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
	return markdownTable(["file", "peak heap + buffers during one edit", "multiple of file size"], rows);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
	console.log(await heapPerEdit());
}
