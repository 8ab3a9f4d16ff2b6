/**
 * Local file and search tools, keel against pi 0.73.1's built-ins, on the same files.
 *
 * keel is called through `Session.call` (the whole tool boundary: argument repair, schema check,
 * path guard, tool, error mapping); pi through its tool definition's `execute`, which is what pi's
 * agent loop calls after its own argument validation.
 */
import { createHash } from "node:crypto";
import {
	closeSync,
	fsync,
	mkdirSync,
	openSync,
	readFileSync,
	renameSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import {
	createEditToolDefinition,
	createGrepToolDefinition,
	createReadToolDefinition,
} from "@mariozechner/pi-coding-agent";
import { Spawner } from "../dist/backend/spawn/spawner.js";
import { createSession } from "../dist/index.js";
import { assert, textOf } from "./lib.mjs";

export const area = "local";
export const title = "Local files and search: keel vs pi 0.73.1";
export const candidate = "keel";
export const baseline = "pi";

const LOREM = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut";

/** ~2 KB of code-like text with one `value = 41` line. */
function smallText() {
	const lines = [];
	for (let i = 0; i < 40; i++) {
		lines.push(
			i === 20 ? "export const value = 41; // the line the edit changes" : `// ${i} ${LOREM.slice(0, 40)}`,
		);
	}
	return `${lines.join("\n")}\n`;
}

/** ~10 MB: 100,000 lines of ~100 bytes, one `value = 41` line in the middle. */
function bigText() {
	const lines = new Array(100_000);
	for (let i = 0; i < lines.length; i++) {
		lines[i] =
			i === 50_000
				? "export const value = 41; // the line the edit changes"
				: `${String(i).padStart(6, "0")}: ${LOREM}`;
	}
	return `${lines.join("\n")}\n`;
}

export const GREP_DIRS = 200;
export const GREP_FILES_PER_DIR = 100;
/** One file in this many holds the rare needle: 20,000 / 400 = 50 matches, under the limit of 100. */
const NEEDLE_EVERY = 400;
/** The first files in path order holding EARLY_FEW: a few matches at once, the limit never reached. */
const EARLY_FILES = 5;
/** Directories from this one on (the last 10 in path order) hold LATE_MARK: the limit is reached late. */
const LATE_FROM_DIR = 190;

function treeFile(d, f) {
	const id = d * GREP_FILES_PER_DIR + f;
	const needle = id % NEEDLE_EVERY === 0 ? `\n// NEEDLE_RARE ${id}` : "";
	const early = id < EARLY_FILES ? `\n// EARLY_FEW ${id}` : "";
	const late = d >= LATE_FROM_DIR ? `\n// LATE_MARK ${id}` : "";
	return `// d${d}/f${f}\nexport function f${id}(x) {\n\treturn x + ${id}; // common_marker\n}${needle}${early}${late}\n${"// filler line\n".repeat(6)}`;
}

/** grep's tree under `dir`/tree: GREP_DIRS directories of GREP_FILES_PER_DIR files (treeFile). */
export function writeGrepTree(dir) {
	for (let d = 0; d < GREP_DIRS; d++) {
		const sub = join(dir, "tree", `d${String(d).padStart(3, "0")}`);
		mkdirSync(sub, { recursive: true });
		for (let f = 0; f < GREP_FILES_PER_DIR; f++)
			writeFileSync(join(sub, `f${String(f).padStart(3, "0")}.js`), treeFile(d, f));
	}
}

/** Both tools must do the same edit: one shared toggle flips `41` ↔ `42`, whoever calls next. */
function toggler(path) {
	const a = "export const value = 41;";
	const b = "export const value = 42;";
	let cur = a;
	return () => {
		const next = cur === a ? b : a;
		const args = { path, edits: [{ oldText: cur, newText: next }] };
		cur = next;
		return args;
	};
}

/**
 * The floor of a durable edit: pi's edit, then the durable write sequence of the same
 * bytes to a file of its own beside it: temp file created and written, fsync, rename over the
 * file, fsync of the directory. The cheap steps are synchronous and only the two fsyncs go to the
 * thread pool, so nothing cheaper writes the bytes durably without blocking the event loop on
 * the disk.
 */
function durableFloor(dir, path, original) {
	const bytes = {
		"export const value = 41;": Buffer.from(original),
		"export const value = 42;": Buffer.from(original.replace("value = 41", "value = 42")),
	};
	const target = join(dir, `floor-${path}`);
	const temp = join(dir, `.floor-tmp-${path}`);
	writeFileSync(target, bytes["export const value = 41;"]);
	const fsyncFd = promisify(fsync);
	return async (newText) => {
		const data = bytes[newText];
		const fd = openSync(temp, "wx", 0o644);
		try {
			writeSync(fd, data);
			await fsyncFd(fd);
		} finally {
			closeSync(fd);
		}
		renameSync(temp, target);
		const d = openSync(dir, "r");
		try {
			await fsyncFd(d);
		} finally {
			closeSync(d);
		}
	};
}

/**
 * @param {{dir: string}} env  a fresh temp directory owned by this area
 * @returns {Promise<{cases: object[], teardown: () => Promise<void>}>}
 */
export async function setup({ dir }) {
	const files = {
		readSmall: "read-small.txt",
		readBig: "read-10mb.txt",
		editSmall: "edit-small.txt",
		editBig: "edit-10mb.txt",
	};
	const small = smallText();
	const big = bigText();
	writeFileSync(join(dir, files.readSmall), small);
	writeFileSync(join(dir, files.editSmall), small);
	writeFileSync(join(dir, files.readBig), big);
	writeFileSync(join(dir, files.editBig), big);
	writeGrepTree(dir);

	const session = await createSession({ root: dir });
	const keel = async (tool, args) => {
		const r = await session.call(tool, args);
		if (!r.ok) throw new Error(`keel ${tool} failed: ${r.error.code}: ${r.error.message}`);
		return r;
	};
	const piRead = createReadToolDefinition(dir);
	const piEdit = createEditToolDefinition(dir);
	const piGrep = createGrepToolDefinition(dir);
	const pi = (def, args) => def.execute("bench", args, undefined, undefined, undefined);

	const hashFile = async (abs) => {
		const h = await open(abs, "r");
		try {
			const hash = createHash("sha256");
			const buf = Buffer.allocUnsafe(1024 * 1024);
			for (;;) {
				const { bytesRead } = await h.read(buf, 0, buf.length, null);
				if (bytesRead === 0) break;
				hash.update(buf.subarray(0, bytesRead));
			}
			return hash.digest("hex");
		} finally {
			await h.close();
		}
	};
	const readCase = (name, path, iterations, warmup, gcEach = false) => ({
		name,
		iterations,
		warmup,
		gcEach,
		async check() {
			const [k, p] = [await keel("read", { path }), await pi(piRead, { path })];
			// Same shown lines; pi keeps the file's final newline and counts the empty "line" after it
			// in its continuation notice (100001 of a 100000-line file), keel does not.
			const body = (t) => t.split("\n\n[")[0].replace(/\n$/, "");
			assert(body(textOf(k)) === body(textOf(p)), `${name}: keel and pi showed different lines`);
		},
		contenders: [
			{ label: "keel", run: () => keel("read", { path }) },
			{ label: "pi", run: () => pi(piRead, { path }) },
			// The floor: the whole file read in 1 MiB chunks through a SHA-256 (the read state's hash).
			{ label: "read+sha256", floor: true, run: () => hashFile(join(dir, path)) },
		],
	});

	const editCase = (name, path, original, iterations, warmup, gcEach = false) => {
		const next = toggler(path);
		const abs = join(dir, path);
		const floor = durableFloor(dir, path, original);
		return {
			name,
			iterations,
			warmup,
			gcEach,
			async check() {
				const k = await keel("edit", next());
				assert(
					readFileSync(abs, "utf8") === original.replace("value = 41", "value = 42"),
					`${name}: keel's edit`,
				);
				const p = await pi(piEdit, next());
				assert(readFileSync(abs, "utf8") === original, `${name}: pi's edit did not restore the file`);
				assert(textOf(k) === textOf(p), `${name}: different result text`);
			},
			contenders: [
				{ label: "keel", run: () => keel("edit", next()) },
				{ label: "pi", run: () => pi(piEdit, next()) },
				{
					label: "floor",
					run: async () => {
						const args = next();
						await pi(piEdit, args);
						await floor(args.edits[0].newText);
					},
				},
			],
			after() {
				assert(readFileSync(abs, "utf8").length === original.length, `${name}: file size drifted`);
			},
		};
	};

	const grepCase = (name, pattern, iterations, warmup, verify) => ({
		name,
		iterations,
		warmup,
		async check() {
			const k = textOf(await keel("grep", { pattern, path: "tree" }));
			const p = textOf(await pi(piGrep, { pattern, path: "tree" }));
			verify(k, p);
		},
		contenders: [
			{ label: "keel", run: () => keel("grep", { pattern, path: "tree" }) },
			{ label: "pi", run: () => pi(piGrep, { pattern, path: "tree" }) },
			// The floor: rg alone with pi's flags (parallel, every core), its output read to the end,
			// started the cheapest way this process can (posix_spawn, as keel's local backend does).
			{ label: "rg", floor: true, run: () => rgAlone(pattern) },
		],
	});
	const floorSpawner = new Spawner({ engine: "posix_spawn" });
	const rgAlone = (pattern) =>
		new Promise((resolve, reject) => {
			const args = ["--json", "--line-number", "--color=never", "--hidden", "--", pattern, join(dir, "tree")];
			const child = floorSpawner.start("rg", args, { stdio: ["ignore", "pipe", "ignore"] });
			let bytes = 0;
			child.stdout.on("data", (c) => {
				bytes += c.length;
			});
			child.on("error", reject);
			child.on("close", (code) =>
				code === 0 && bytes > 0 ? resolve(bytes) : reject(new Error(`rg exit ${code}`)),
			);
		});
	const matchRows = (out) => out.split("\n").filter((l) => /^[^\s].*:\d+: /.test(l));

	const nFiles = GREP_DIRS * GREP_FILES_PER_DIR;
	const cases = [
		readCase(`read, small file (${(small.length / 1024).toFixed(1)} KB)`, files.readSmall, 200, 20),
		readCase(
			`read, 10 MB file (${(big.length / 1e6).toFixed(1)} MB, default limits)`,
			files.readBig,
			40,
			3,
			true,
		),
		editCase("edit, one change in the small file", files.editSmall, small, 200, 20),
		editCase("edit, one change in the 10 MB file", files.editBig, big, 20, 3, true),
		grepCase(
			`grep, ${nFiles.toLocaleString("en-US")} files, ${nFiles / NEEDLE_EVERY} matches (full scan)`,
			"NEEDLE_RARE",
			20,
			3,
			(k, p) => {
				const [a, b] = [matchRows(k).sort(), matchRows(p).sort()];
				assert(a.length === nFiles / NEEDLE_EVERY, `rare grep: keel found ${a.length} matches`);
				assert(JSON.stringify(a) === JSON.stringify(b), "rare grep: keel and pi found different lines");
			},
		),
		grepCase(
			`grep, ${nFiles.toLocaleString("en-US")} files, every file matches (stops at limit 100)`,
			"common_marker",
			20,
			3,
			(k, p) => {
				assert(
					matchRows(k).length === 100 && matchRows(p).length === 100,
					"limit grep: expected 100 rows each",
				);
				assert(
					k.includes("100 matches limit reached") && p.includes("100 matches limit reached"),
					"limit notice",
				);
			},
		),
		// A few matches at once, then none: a plan that bets on the limit being reached soon loses.
		grepCase(
			`grep, ${nFiles.toLocaleString("en-US")} files, ${EARLY_FILES} matches all first in path order (full scan)`,
			"EARLY_FEW",
			20,
			3,
			(k, p) => {
				const [a, b] = [matchRows(k), matchRows(p).sort()];
				assert(a.length === EARLY_FILES, `early grep: keel found ${a.length} matches`);
				assert(JSON.stringify([...a].sort()) === JSON.stringify(b), "early grep: different lines");
			},
		),
		// Matches only in the last 10 directories in path order: the limit is reached, but late in
		// path order (the parallel run meets them early: its walk is not in path order).
		grepCase(
			`grep, ${nFiles.toLocaleString("en-US")} files, matches only in the last ${GREP_DIRS - LATE_FROM_DIR} dirs (stops at limit 100, reached late)`,
			"LATE_MARK",
			10,
			2,
			(k, p) => {
				const rows = matchRows(k);
				assert(rows.length === 100 && matchRows(p).length === 100, "late grep: expected 100 rows each");
				// keel's are the first 100 in path order: all of the first late directory.
				const first = `d${LATE_FROM_DIR}/`;
				assert(
					rows.every((r) => r.includes(first)),
					`late grep: keel's rows are not all under ${first}`,
				);
				assert(k.includes("100 matches limit reached"), "late grep: limit notice");
			},
		),
		// One pathological line: keel's cost must grow with the output it shows, not the line (pi
		// is left out: its grep parses rg's per-match JSON of the whole line).
		...[1, 4, 16].map((mb) => {
			const path = `line-${mb}mb.txt`;
			writeFileSync(join(dir, path), `${"ab".repeat(mb * 512 * 1024)}\n`);
			return {
				name: `grep ".", one ${mb} MB line`,
				iterations: 10,
				warmup: 2,
				async check() {
					const out = textOf(await keel("grep", { pattern: ".", path }));
					assert(out.includes("Some lines truncated"), `${mb} MB line: expected the cut line`);
				},
				contenders: [{ label: "keel", run: () => keel("grep", { pattern: ".", path }) }],
			};
		}),
	];
	return {
		cases,
		async teardown() {
			await session.close();
		},
	};
}
