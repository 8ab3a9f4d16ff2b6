/**
 * One disposable child for one smoke test: `node smoke-child.mjs DRAFT` on this
 * machine, bounded every way the host can bound it without privileges:
 *  - environment: PATH, and HOME/TMPDIR pointing at a fresh temp dir that is also its cwd;
 *  - capabilities: Node's permission model: reads only the draft's root and the child entry,
 *    writes only the temp dir, no child processes, workers, inspector or native addons;
 *  - memory: a V8 heap cap, and RLIMIT_DATA for what lives off the heap (Buffers);
 *  - time: a wall-clock timeout that SIGKILLs the process group; RLIMIT_CPU as the backstop that
 *    ends a busy draft even if this process dies first; the caller's AbortSignal;
 *  - output: stdout/stderr counted and drained, only a head kept; the report channel (fd 3) capped.
 * The result is settled once, by the first terminal event; the group is killed and the temp dir
 * removed before the promise resolves, whichever way the run ended.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { killChildGroup } from "../backend/group-kill.js";
import { fillPlaceholders, hostProgram, readHostFile } from "../backend/remote/host-programs.js";
import { utf8CompleteEnd } from "../boundary/truncate.js";
import { type ChildReport, MAX_REPORT_BYTES, parseReport, REPORT_LIMITS, ReportError } from "./report.js";

/** Resolved next to this module, so it is found from src/extensions and from dist/extensions alike. */
export const CHILD_ENTRY = fileURLToPath(new URL("../../src/extensions/smoke-child.mjs", import.meta.url));

export interface ChildLimits {
	timeoutMs: number;
	heapMb: number;
	dataMb: number;
	/** Bytes kept of each of stdout and stderr (all of it is counted and drained). */
	outputHeadBytes: number;
}

export interface ChildRunRequest extends ChildLimits {
	/** Canonical path of the draft. */
	draft: string;
	/** Directories the draft may read (its root: relative imports and node_modules). */
	readable: string[];
	signal?: AbortSignal;
	/** Called once the child runs (hosts and tests: its pid and temp dir). */
	onSpawn?: (info: { pid: number; tempDir: string }) => void;
	/** Puts a sandbox in front of the child's argv (containment.ts); none: run it as it is. */
	wrap?: (argv: string[], tempDir: string) => Promise<string[]>;
}

export interface StreamCapture {
	bytes: number;
	head: string;
	truncated: boolean;
}

/** How the child's run ended: the first terminal event decides. */
export type Ending =
	| { by: "report"; report: ChildReport }
	| { by: "protocol"; problem: string }
	| { by: "timeout" }
	| { by: "abort" }
	| { by: "exit" }
	| { by: "spawn"; message: string };

export interface ChildOutcome {
	ending: Ending;
	exit?: { code: number | null; signal: NodeJS.Signals | null };
	/** V8 wrote its out-of-memory notice on stderr. */
	heapExhausted: boolean;
	stdout: StreamCapture;
	stderr: StreamCapture;
	tempDir?: string;
	cleanupError?: string;
}

/** After the child exits, how long its pipes may stay open (held by something it left behind). */
const PIPE_DRAIN_MS = 500;

/** Kept across stderr chunks to find V8's notice even when it straddles two. */
const OOM_MARKER = /out of memory/i;
const OOM_CARRY = 32;

class Head {
	private chunks: Buffer[] = [];
	private held = 0;
	bytes = 0;
	constructor(private readonly max: number) {}
	add(chunk: Buffer): void {
		this.bytes += chunk.length;
		if (this.held >= this.max) return;
		const part = chunk.subarray(0, this.max - this.held);
		this.chunks.push(part);
		this.held += part.length;
	}
	capture(): StreamCapture {
		const buf = Buffer.concat(this.chunks);
		return {
			bytes: this.bytes,
			head: buf.subarray(0, utf8CompleteEnd(buf)).toString("utf8"),
			truncated: this.bytes > buf.length,
		};
	}
}

/** Node's permission flag: `--permission` from Node 22.13/23.5, `--experimental-permission` before. */
function permissionFlag(): string | undefined {
	const flags = process.allowedNodeEnvironmentFlags;
	if (flags.has("--permission")) return "--permission";
	if (flags.has("--experimental-permission")) return "--experimental-permission";
	return undefined;
}

/** node's argv for the child (after the shell that sets the resource limits). */
function nodeArgv(req: ChildRunRequest, tempDir: string): string[] {
	const argv = [`--max-old-space-size=${req.heapMb}`];
	const permission = permissionFlag();
	if (permission) {
		argv.push(permission, `--allow-fs-read=${CHILD_ENTRY}`, `--allow-fs-write=${tempDir}`);
		for (const dir of [...req.readable, tempDir]) argv.push(`--allow-fs-read=${dir}`);
		if (process.allowedNodeEnvironmentFlags.has("--disable-warning"))
			argv.push("--disable-warning=ExperimentalWarning");
	}
	argv.push(CHILD_ENTRY, req.draft, JSON.stringify(REPORT_LIMITS));
	return argv;
}

const limitsText = hostProgram(() => readHostFile("child_limits.sh"));

/**
 * Limits that outlive this process go on through the shell (child_limits.sh): data segment (KiB),
 * CPU seconds, no core files (a heap abort would write one), file size (blocks) for what the draft
 * writes to its temp dir. A limit the shell cannot set (a lower hard limit is in force) stays as it was.
 */
export function limitScript(req: Pick<ChildLimits, "timeoutMs" | "dataMb">): string {
	const cpuSeconds = Math.ceil(req.timeoutMs / 1000) * 2 + 5;
	return fillPlaceholders(limitsText(), {
		DATA_KB: String(req.dataMb * 1024),
		CPU_SECONDS: String(cpuSeconds),
	});
}

/** Remove the temp dir even when the draft made parts of it unreadable or unwritable. */
async function removeTempDir(dir: string): Promise<string | undefined> {
	try {
		await rm(dir, { recursive: true, force: true });
		return undefined;
	} catch {
		// chmod every directory back to rwx for the owner, then try once more.
		const open = async (d: string): Promise<void> => {
			await chmod(d, 0o700).catch(() => {});
			const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
			for (const e of entries) if (e.isDirectory()) await open(join(d, e.name));
		};
		await open(dir);
		try {
			await rm(dir, { recursive: true, force: true });
			return undefined;
		} catch (e) {
			return e instanceof Error ? e.message : String(e);
		}
	}
}

export async function runChild(req: ChildRunRequest): Promise<ChildOutcome> {
	const stdout = new Head(req.outputHeadBytes);
	const stderr = new Head(req.outputHeadBytes);
	const blank = (): ChildOutcome => ({
		ending: { by: "abort" },
		heapExhausted: false,
		stdout: stdout.capture(),
		stderr: stderr.capture(),
	});
	if (req.signal?.aborted) return blank();
	const tempDir = await mkdtemp(join(tmpdir(), "keel-smoke-"));
	if (req.signal?.aborted) {
		return { ...blank(), tempDir, cleanupError: await removeTempDir(tempDir) };
	}
	const plain = ["/bin/sh", "-c", limitScript(req), process.execPath, ...nodeArgv(req, tempDir)];
	const argv = req.wrap ? await req.wrap(plain, tempDir) : plain;
	const outcome = await new Promise<Omit<ChildOutcome, "tempDir" | "cleanupError">>((resolve) => {
		const nonce = randomBytes(16).toString("hex");
		const child = spawn(argv[0], argv.slice(1), {
			cwd: tempDir,
			detached: true,
			env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tempDir, TMPDIR: tempDir },
			stdio: ["pipe", "pipe", "pipe", "pipe"],
		});
		let ending: Ending | undefined;
		let heapExhausted = false;
		let carry = "";
		const report: Buffer[] = [];
		let reportBytes = 0;

		/** The first terminal event wins; every one of them ends the group. */
		const end = (e: Ending) => {
			ending ??= e;
			killChildGroup(child);
		};
		const onAbort = () => end({ by: "abort" });
		const timer = setTimeout(() => end({ by: "timeout" }), req.timeoutMs);
		req.signal?.addEventListener("abort", onAbort, { once: true });

		const channel = child.stdio[3] as NodeJS.ReadableStream | null;
		channel?.on("data", (chunk: Buffer) => {
			if (ending) return;
			const nl = chunk.indexOf(10);
			const part = nl === -1 ? chunk : chunk.subarray(0, nl);
			reportBytes += part.length;
			if (reportBytes > MAX_REPORT_BYTES) {
				end({ by: "protocol", problem: `the report is larger than ${MAX_REPORT_BYTES} bytes` });
				return;
			}
			report.push(part);
			if (nl === -1) return;
			try {
				end({ by: "report", report: parseReport(Buffer.concat(report).toString("utf8"), nonce) });
			} catch (e) {
				end({ by: "protocol", problem: e instanceof ReportError ? e.message : String(e) });
			}
		});
		channel?.on("error", () => {});
		child.stdout?.on("data", (c: Buffer) => stdout.add(c));
		child.stderr?.on("data", (c: Buffer) => {
			stderr.add(c);
			if (heapExhausted) return;
			const text = carry + c.toString("latin1");
			heapExhausted = OOM_MARKER.test(text);
			carry = text.slice(-OOM_CARRY);
		});
		child.stdin?.on("error", () => {});
		// The stdin pipe stays open: its end tells an idle child that this process is gone.
		child.stdin?.write(nonce);

		let spawnError: string | undefined;
		child.on("error", (e) => {
			spawnError = e.message;
		});
		child.on("spawn", () => {
			if (child.pid !== undefined) req.onSpawn?.({ pid: child.pid, tempDir });
		});
		// Something the draft left behind could hold the pipes open after the child is gone: not forever.
		let drain: NodeJS.Timeout | undefined;
		child.on("exit", () => {
			drain = setTimeout(() => {
				for (const s of child.stdio) s?.destroy();
			}, PIPE_DRAIN_MS);
		});
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			clearTimeout(drain);
			req.signal?.removeEventListener("abort", onAbort);
			// A process the draft left behind in the group (it cannot spawn under the permission
			// model; this is the backstop) goes with the leader.
			killChildGroup(child);
			child.stdin?.destroy();
			const final: Ending = ending ?? (spawnError ? { by: "spawn", message: spawnError } : { by: "exit" });
			resolve({
				ending: final,
				exit: child.pid === undefined ? undefined : { code, signal },
				heapExhausted,
				stdout: stdout.capture(),
				stderr: stderr.capture(),
			});
		});
	});
	return { ...outcome, tempDir, cleanupError: await removeTempDir(tempDir) };
}
