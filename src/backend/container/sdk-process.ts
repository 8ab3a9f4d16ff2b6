/**
 * One seam for the sandbox SDKs (E2B, Vercel Sandbox, Daytona, Modal): each SDK module (e2b.ts,
 * vercel-sandbox.ts, daytona.ts, modal.ts) adapts its exec primitive to an SdkLauncher, and this
 * file turns a launcher into keel's ExecTransport (one SDK process per call) and, where the SDK
 * keeps a process with stdin open, into a ShellPipe for the container backend's persistent
 * shells (shell-transport.ts), so an operation costs one request on an open process.
 *
 * Most SDKs hand output back as decoded strings (a byte that is not UTF-8 becomes U+FFFD) and some
 * take stdin only as a string, so on a "text" launcher the program runs under WRAPPER on the
 * target: its stdin arrives as base64 lines (a "." line is end of input, so no SDK stdin-close is
 * needed), its stdout and stderr leave as base64 lines on the SDK's two streams, and its status
 * follows as a last "!N" line: every byte survives a text channel. A "binary" launcher (Modal's
 * binary mode) runs the argv as it is.
 */
import { randomBytes } from "node:crypto";
import type { ExecTransport, TransportOptions } from "../exec/transport.js";
import { fillPlaceholders, hostProgram, readHostFile, readHostLine } from "../remote/host-programs.js";
import type { ShellPipe } from "../ssh/shell.js";
import { type LineDecoder, lineDecoder } from "./sdk-lines.js";

/** One process started through an SDK. */
export interface SdkProcess {
	/** To the process's stdin, in order (a text launcher is given strings only). */
	write(data: string | Uint8Array): Promise<void>;
	/** End of stdin (binary launchers; text launchers end input with a "." line). */
	closeStdin(): Promise<void>;
	/** Stop the process, as far as the SDK can (best effort). */
	kill(): Promise<void>;
	/** Settles once the process ended and its output was delivered: its exit code when the SDK tells. */
	done: Promise<number | null>;
}

export interface SdkOutput {
	stdout(chunk: string | Uint8Array): void;
	stderr(chunk: string | Uint8Array): void;
}

export interface SdkLauncher {
	/** For messages: "E2B sandbox sbx-1". */
	label: string;
	/** "text": strings out (and maybe in): WRAPPER on the target; "binary": bytes both ways. */
	encoding: "text" | "binary";
	/** false when the SDK has no stdin for a running process (stdin then travels in KEEL_IN). */
	stdin: boolean;
	start(
		argv: string[],
		out: SdkOutput,
		opts: { stdin: boolean; env?: Record<string, string> },
	): Promise<SdkProcess>;
}

/**
 * WRAPPER (src/backend/remote/host/sdk_wrapper.sh). $1: "-" no stdin, "i" base64 lines on stdin up to a "." line, "e" base64 in $KEEL_IN, "f" base64
 * in the file $KEEL_IN_FILE (staged first, removed after); then argv.
 * In mode i each base64 line comes after a "#N" line giving its length: the shell's `read` takes a
 * byte per system call (dash: 11 s for 5 MB here), so where `head -c` reads no further than asked
 * (GNU; checked once), the line itself goes through head -c (0.3 s); elsewhere (busybox's head
 * reads ahead) the "#N" line is skipped and the line read as before.
 * Input (mode i) reaches the program through a FIFO from a background dec, killed when the program
 * exits: a program that ends before its input does (a crashed python worker's mux) ends the call.
 * enc reads what one read() returns (dd count=1) so output streams; each chunk is one ":B64" line.
 * A leading newline ends whatever a login shell printed first; lines without ":" are ignored.
 * Where python3 exists, mode i (the persistent shells, python's mux) runs host/sdk_relay.py
 * instead: the same protocol in one process, where sh starts two per chunk out and per line in.
 */
export const sdkWrapperScript = hostProgram(() =>
	fillPlaceholders(readHostFile("sdk_wrapper.sh"), {}, { SDK_RELAY: readHostFile("sdk_relay.py") }),
);

/** stage_input.sh PATH: append $KEEL_IN to the private file PATH, then print the "!0" status. */
export const stageInputScript = hostProgram(() => readHostLine("stage_input.sh"));

/** The argv a text launcher starts for `argv`. */
export const wrapped = (mode: "-" | "i" | "e" | "f", argv: readonly string[]) => [
	"sh",
	"-c",
	sdkWrapperScript(),
	"keel",
	mode,
	...argv,
];

/** Input bytes per base64 line (256 KiB of base64): few `head -c` and `base64 -d` starts per file. */
const INPUT_LINE_BYTES = 196608;

/** base64 lines, each after a "#N" line with its length, as WRAPPER's dec reads them. */
export function inputLines(data: Uint8Array): string {
	const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
	let out = "";
	for (let at = 0; at < b.length; at += INPUT_LINE_BYTES) {
		const line = b.subarray(at, at + INPUT_LINE_BYTES).toString("base64");
		out += `#${line.length}\n${line}\n`;
	}
	return out;
}

const bytes = (c: string | Uint8Array) => (typeof c === "string" ? Buffer.from(c, "utf8") : Buffer.from(c));

/** Where a text launcher's two streams are decoded: data lines out, the "!N" status kept. */
function decoders(onData: (c: Buffer, s: "stdout" | "stderr") => void) {
	let status: number | null = null;
	const out: LineDecoder = lineDecoder(
		(c) => onData(c, "stdout"),
		(n) => {
			status = n;
		},
	);
	const err: LineDecoder = lineDecoder((c) => onData(c, "stderr"));
	return {
		sink: {
			stdout: (c: string | Uint8Array) => out.push(c),
			stderr: (c: string | Uint8Array) => err.push(c),
		},
		finish: () => {
			out.end();
			err.end();
			return status;
		},
	};
}

/** After an abort's end of input, how long a program has to exit before the SDK's kill. */
const KILL_GRACE_MS = 2000;

/** KEEL_IN holds at most this much base64 (a launcher without stdin). */
const ENV_STDIN_MAX = 96 * 1024;

/** One SDK process per call (ExecTransport contract, exec/transport.ts). */
export function sdkTransport(launcher: SdkLauncher): ExecTransport {
	return async (argv: string[], opts: TransportOptions) => {
		if (opts.signal?.aborted) return { exitCode: null };
		const streamed = opts.stdin !== undefined && !(opts.stdin instanceof Uint8Array);
		if (!launcher.stdin && streamed) {
			throw new Error(`the ${launcher.label} cannot stream stdin to a running program`);
		}
		const onData = (c: Buffer, s: "stdout" | "stderr") => opts.onData?.(c, s);
		const text = launcher.encoding === "text";
		const dec = decoders(onData);
		const sink = text
			? dec.sink
			: {
					stdout: (c: string | Uint8Array) => onData(bytes(c), "stdout"),
					stderr: (c: string | Uint8Array) => onData(bytes(c), "stderr"),
				};
		let env: Record<string, string> | undefined;
		let mode: "-" | "i" | "e" | "f" = opts.stdin === undefined ? "-" : "i";
		if (!launcher.stdin && opts.stdin instanceof Uint8Array) {
			const b64 = Buffer.from(opts.stdin).toString("base64");
			if (b64.length <= ENV_STDIN_MAX) {
				env = { KEEL_IN: b64 };
				mode = "e";
			} else {
				env = { KEEL_IN_FILE: await stageInput(launcher, b64, opts.signal) };
				mode = "f";
			}
		}
		const proc = await launcher.start(text ? wrapped(mode, argv) : argv, sink, {
			stdin: mode === "i",
			env,
		});
		let ended = false;
		const mark = () => {
			ended = true;
		};
		proc.done.then(mark, mark);
		const onAbort = () => {
			// EOF first: a program reading stdin ends itself (the python mux kills its worker's group,
			// which a kill of the mux would leave behind); the SDK's kill only if it is still there.
			void (text ? proc.write(".\n") : proc.closeStdin()).catch(() => {});
			setTimeout(() => {
				if (!ended) void proc.kill().catch(() => {});
			}, KILL_GRACE_MS).unref();
		};
		opts.signal?.addEventListener("abort", onAbort, { once: true });
		try {
			if (mode === "i" || (!text && opts.stdin !== undefined)) feed(proc, opts.stdin, text);
			const code = await (opts.signal ? Promise.race([proc.done, aborted(opts.signal)]) : proc.done);
			if (opts.signal?.aborted) return { exitCode: null };
			return { exitCode: text ? dec.finish() : code };
		} finally {
			opts.signal?.removeEventListener("abort", onAbort);
		}
	};
}

/**
 * A launcher without stdin: larger input is appended to a private temp file on the target in
 * KEEL_IN-sized pieces, one SDK command each; the wrapper reads it and removes it.
 */
async function stageInput(launcher: SdkLauncher, b64: string, signal?: AbortSignal): Promise<string> {
	const path = `/tmp/.keel-in-${randomBytes(12).toString("hex")}`;
	const append = ["sh", "-c", stageInputScript(), "sh", path];
	for (let at = 0; at < b64.length; at += ENV_STDIN_MAX) {
		if (signal?.aborted) throw new Error("aborted");
		let status: number | null = null;
		const dec = lineDecoder(
			() => {},
			(n) => {
				status = n;
			},
		);
		const proc = await launcher.start(
			append,
			{ stdout: (c) => dec.push(c), stderr: () => {} },
			{
				stdin: false,
				env: { KEEL_IN: b64.slice(at, at + ENV_STDIN_MAX) },
			},
		);
		await proc.done;
		dec.end();
		if (status !== 0) throw new Error(`cannot stage stdin on the ${launcher.label}`);
	}
	return path;
}

const aborted = (signal: AbortSignal) =>
	new Promise<null>((resolve) => signal.addEventListener("abort", () => resolve(null), { once: true }));

/** Stdin to the process in order, then end of input. */
function feed(proc: SdkProcess, input: TransportOptions["stdin"], text: boolean): void {
	const send = (c: Uint8Array) => proc.write(text ? inputLines(c) : c);
	const end = () => (text ? proc.write(".\n") : proc.closeStdin());
	let chain: Promise<unknown> = Promise.resolve();
	const then = (fn: () => Promise<unknown>) => {
		chain = chain.then(fn).catch(() => {});
	};
	if (input === undefined || input instanceof Uint8Array) {
		if (input && input.length > 0) then(() => send(input));
		then(end);
		return;
	}
	input.on("data", (c: Buffer | string) => then(() => send(typeof c === "string" ? Buffer.from(c) : c)));
	input.on("end", () => then(end));
	input.on("error", () => then(end));
}

/**
 * A long-lived `sh` on the target as a ShellPipe: the carrier the persistent shells run on. The
 * SDK's start is asynchronous, so writes wait for it (in order); a failed start closes the pipe.
 */
export function sdkShellPipe(launcher: SdkLauncher): ShellPipe {
	const text = launcher.encoding === "text";
	const stdoutFns: ((c: Buffer) => void)[] = [];
	const stderrFns: ((c: Buffer) => void)[] = [];
	const closeFns: ((e: Error) => void)[] = [];
	let ended: Error | undefined;
	const end = (e: Error) => {
		if (ended) return;
		ended = e;
		for (const fn of closeFns) fn(e);
	};
	const onData = (c: Buffer, s: "stdout" | "stderr") => {
		for (const fn of s === "stdout" ? stdoutFns : stderrFns) fn(c);
	};
	const dec = decoders(onData);
	const sink = text
		? dec.sink
		: {
				stdout: (c: string | Uint8Array) => onData(bytes(c), "stdout"),
				stderr: (c: string | Uint8Array) => onData(bytes(c), "stderr"),
			};
	const started = launcher.start(text ? wrapped("i", ["sh"]) : ["sh"], sink, { stdin: true });
	let chain: Promise<unknown> = started.then(
		(p) => {
			p.done.then(
				(code) =>
					end(new Error(`the shell in the ${launcher.label} ended (exit ${text ? dec.finish() : code})`)),
				(e: Error) => end(new Error(`the shell in the ${launcher.label} ended: ${e?.message ?? e}`)),
			);
		},
		(e: Error) => end(new Error(`cannot start a shell in the ${launcher.label}: ${e?.message ?? e}`)),
	);
	const queue = (fn: (p: SdkProcess) => Promise<unknown>) => {
		chain = chain
			.then(() => started)
			.then(fn)
			.catch((e: Error) => end(new Error(`lost the shell in the ${launcher.label}: ${e?.message ?? e}`)));
	};
	return {
		write: (t) => queue((p) => p.write(text ? inputLines(Buffer.from(t, "utf8")) : Buffer.from(t, "utf8"))),
		onStdout: (fn) => stdoutFns.push(fn),
		onStderr: (fn) => stderrFns.push(fn),
		onClose: (fn) => closeFns.push(fn),
		close: () => {
			queue((p) => (text ? p.write(".\n") : p.closeStdin()));
			// A carrier still there after the shell's EOF is not waited for.
			setTimeout(() => queue((p) => p.kill()), 2000).unref();
		},
	};
}
