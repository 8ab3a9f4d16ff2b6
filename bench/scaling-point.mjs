/**
 * One point of the scaling bench (bench/scaling.mjs), run in a fresh process so that one point's
 * heap, page cache of parsed modules and peak RSS do not carry into the next.
 *
 *   node --expose-gc bench/scaling-point.mjs '{"tool":"keel","op":"read","root":…,"path":…,…}'
 *
 * tool: keel (Session.call), pi (pi 0.73.1's tool definition's execute), or floor (the least
 * work that gives the same answer, in plain node: see FLOOR below). op: read, edit, grep, find.
 * Prints one JSON line: the timed samples, the peak RSS of the process's first call (from the RSS
 * after set-up), and a signature of the answer (hashes of what was shown) so the parent can check
 * every contender gave the same one.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, openSync, readFileSync, readSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { collectGarbage, nowMs, textOf } from "./lib.mjs";

const spec = JSON.parse(process.argv[2]);
const abs = join(spec.root, spec.path);
const run = promisify(execFile);
const PI_MAX_BYTES = 50 * 1024;
const EDIT_FROM = "export const value = 41;";
const EDIT_TO = "export const value = 42;";

/** Resident set now and its high-water mark since the last reset, in bytes (Linux). */
function rss() {
	const status = readFileSync("/proc/self/status", "utf8");
	const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN) * 1024;
	return { now: kb("VmRSS"), peak: kb("VmHWM") };
}

/** Reset VmHWM to the current RSS (clear_refs 5); false where the kernel does not allow it. */
function resetPeak() {
	try {
		writeFileSync("/proc/self/clear_refs", "5");
		return true;
	} catch {
		return false;
	}
}

const sha = (s) => createHash("sha256").update(s).digest("hex").slice(0, 16);
/** pi keeps the file's final newline and its notice counts the empty "line" after it; keel does not. */
const shownBody = (text) => text.split("\n\n[")[0].replace(/\n$/, "");
const matchRows = (text) => text.split("\n").filter((l) => /^[^\s].*:\d+: /.test(l));
const pathRows = (text) =>
	text
		.split("\n")
		.filter((l) => l && !l.startsWith("["))
		.map((l) => l.replace(/^\.\//, ""));

/** The file toggles 41 ↔ 42 on every edit; it starts (and is left) at 41. */
function makeToggle() {
	let cur = EDIT_FROM;
	return {
		next() {
			const next = cur === EDIT_FROM ? EDIT_TO : EDIT_FROM;
			const edit = { oldText: cur, newText: next };
			cur = next;
			return edit;
		},
		get atStart() {
			return cur === EDIT_FROM;
		},
	};
}

/**
 * FLOOR: read = the bytes pi shows (the first 50 KB) plus a streaming hash of the whole file
 * (what a read-before-edit state needs); edit = read, replace, then the durable write sequence
 * (temp file, fsync, rename, directory fsync); grep = rg with pi's flags; find = fd with pi's flags.
 */
async function floorContender(op) {
	if (op === "read")
		return async () => {
			const fd = openSync(abs, "r");
			try {
				const head = Buffer.allocUnsafe(PI_MAX_BYTES);
				const shown = readSync(fd, head, 0, head.length, 0);
				const hash = createHash("sha256");
				const chunk = Buffer.allocUnsafe(1 << 20);
				for (let pos = 0; ; ) {
					const n = readSync(fd, chunk, 0, chunk.length, pos);
					if (n === 0) break;
					hash.update(chunk.subarray(0, n));
					pos += n;
				}
				return { text: head.toString("utf8", 0, shown), digest: hash.digest("hex") };
			} finally {
				closeSync(fd);
			}
		};
	if (op === "edit")
		return async ({ oldText, newText }) => {
			const text = readFileSync(abs, "utf8");
			const at = text.indexOf(oldText);
			if (at < 0) throw new Error("floor edit: old text not found");
			const tmp = `${abs}.floor-tmp`;
			const fd = openSync(tmp, "w");
			try {
				writeFileSync(fd, text.slice(0, at) + newText + text.slice(at + oldText.length));
				fsyncSync(fd);
			} finally {
				closeSync(fd);
			}
			renameSync(tmp, abs);
			const dir = openSync(dirname(abs), "r");
			fsyncSync(dir);
			closeSync(dir);
		};
	if (op === "grep")
		return async () => {
			const args = ["--json", "--line-number", "--color=never", "--hidden", "--", spec.pattern, abs];
			return (await run("rg", args, { maxBuffer: 1 << 28 })).stdout;
		};
	const args = ["--glob", "--color=never", "--hidden", "--max-results", "1000", "--", spec.pattern, abs];
	return async () => (await run(spec.fd, args, { maxBuffer: 1 << 28 })).stdout;
}

async function keelContender(op) {
	const { createSession } = await import("../dist/index.js");
	const session = await createSession({ root: spec.root });
	return async (edit) => {
		const args =
			op === "edit" ? { path: spec.path, edits: [edit] } : { path: spec.path, pattern: spec.pattern };
		if (op === "read") delete args.pattern;
		const r = await session.call(op, args);
		if (!r.ok) throw new Error(`keel ${op}: ${r.error.code}: ${r.error.message}`);
		return r;
	};
}

async function piContender(op) {
	const pi = await import("@mariozechner/pi-coding-agent");
	const make = {
		read: pi.createReadToolDefinition,
		edit: pi.createEditToolDefinition,
		grep: pi.createGrepToolDefinition,
		find: pi.createFindToolDefinition,
	}[op];
	const def = make(spec.root);
	return (edit) => {
		const args =
			op === "edit" ? { path: spec.path, edits: [edit] } : { path: spec.path, pattern: spec.pattern };
		if (op === "read") delete args.pattern;
		return def.execute("bench", args, undefined, undefined, undefined);
	};
}

/** What the answer was, reduced to something every contender must agree on. */
function signature(op, result) {
	if (op === "edit") return sha(readFileSync(abs));
	if (spec.tool === "floor") {
		if (op === "read") return sha(shownBody(result.text.split("\n").slice(0, -1).join("\n")));
		if (op === "grep") {
			const rows = result
				.split("\n")
				.filter((l) => l.includes('"type":"match"'))
				.map((l) => {
					const m = JSON.parse(l).data;
					return `${m.path.text.slice(abs.length + 1)}:${m.line_number}: ${m.lines.text.replace(/\n$/, "")}`;
				});
			return sha(rows.sort().join("\n"));
		}
		return sha(
			pathRows(result.replaceAll(`${abs}/`, ""))
				.sort()
				.join("\n"),
		);
	}
	const text = textOf(result);
	if (op === "read") return sha(shownBody(text));
	if (op === "grep") return sha(matchRows(text).sort().join("\n"));
	return sha(pathRows(text).sort().join("\n"));
}

async function main() {
	const { tool, op } = spec;
	const call = await { keel: keelContender, pi: piContender, floor: floorContender }[tool](op);
	const toggle = makeToggle();
	const once = () => call(op === "edit" ? toggle.next() : undefined);

	// Memory: the first call, measured from the RSS after set-up (modules loaded, session made), so
	// no earlier call's garbage or retained pages count. Its answer is the signature (for an edit:
	// the file after it, 41 → 42). Then the warm-up, then the timed calls.
	await collectGarbage(20);
	const before = rss();
	const peakReset = resetPeak();
	const first = await once();
	const after = rss();
	const sig = signature(op, first);
	for (let i = 0; i < spec.warmup; i++) await once();

	const samples = [];
	for (let i = 0; i < spec.iterations; i++) {
		if (spec.gcEach) await collectGarbage();
		const t0 = nowMs();
		await once();
		samples.push(nowMs() - t0);
	}
	if (op === "edit" && !toggle.atStart) await once();
	process.stdout.write(
		`${JSON.stringify({
			samples,
			rssBefore: before.now,
			rssPeak: peakReset ? after.peak : process.resourceUsage().maxRSS * 1024,
			peakReset,
			signature: sig,
		})}\n`,
	);
}

main().catch((err) => {
	process.stderr.write(`${err?.stack ?? err}\n`);
	process.exit(1);
});
