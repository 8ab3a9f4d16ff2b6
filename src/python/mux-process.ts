/**
 * The worker behind mux.py, for backends that only give a process stdin, stdout and stderr (ssh,
 * exec): presents the same SpawnedProcess the worker has on this machine (fd3, fd4, stdout,
 * stderr, exit status), demultiplexed from the mux's records. See mux.py for the record format.
 */
import { PassThrough, Writable } from "node:stream";
import { afterPendingData } from "../backend/relay-process.js";
import type { ProcessExit, SpawnedProcess } from "../backend/types.js";

const HEADER = 5;
/** Records larger than this mean the stream is not the mux talking (a login banner, a wrong program). */
const MAX_RECORD = 1 << 20;

export function muxedWorker(mux: SpawnedProcess, workerSource: string): SpawnedProcess {
	const stdout = new PassThrough();
	const stderr = new PassThrough();
	const fd4 = new PassThrough();
	const byTag: Record<string, PassThrough> = { "1": stdout, "2": stderr, "4": fd4 };
	let status: ProcessExit | undefined;
	let corrupt: string | undefined;
	let remotePid: number | undefined;
	let held: Buffer = Buffer.alloc(0);
	const diagnostics: Buffer[] = [];

	mux.stdout.on("data", (chunk: Buffer) => {
		if (corrupt) return;
		held = held.length ? Buffer.concat([held, chunk]) : chunk;
		while (held.length >= HEADER) {
			const tag = String.fromCharCode(held[0]);
			const size = held.readUInt32BE(1);
			if (!"124px".includes(tag) || size > MAX_RECORD) {
				corrupt = `unexpected output from the Python mux: ${JSON.stringify(held.subarray(0, 40).toString("latin1"))}`;
				mux.kill();
				return;
			}
			if (held.length < HEADER + size) break;
			const data = held.subarray(HEADER, HEADER + size);
			held = held.subarray(HEADER + size);
			if (tag === "p") remotePid = Number(data.toString("latin1"));
			else if (tag === "x") status = parseExit(data.toString("latin1"));
			else byTag[tag].write(Buffer.from(data));
		}
	});
	// The mux's own stderr: Python not starting, a traceback of the mux itself.
	mux.stderr.on("data", (chunk: Buffer) => {
		if (diagnostics.reduce((n, c) => n + c.length, 0) < 4096) diagnostics.push(chunk);
	});

	const source = Buffer.from(workerSource, "utf8");
	const header = Buffer.alloc(4);
	header.writeUInt32BE(source.length);
	const stdin = mux.stdin;
	if (!stdin) throw new Error("muxedWorker: the mux needs its stdin");
	stdin.write(Buffer.concat([header, source]));

	const fd3 = new Writable({
		write(chunk, _enc, done) {
			stdin.write(chunk);
			done();
		},
	});
	fd3.on("error", () => {});
	stdin.on("error", () => {});

	const exited = mux.exited.then(async (exit): Promise<ProcessExit> => {
		for (const s of [stdout, stderr, fd4]) s.end();
		await afterPendingData();
		if (status && !corrupt) return status;
		const said = Buffer.concat(diagnostics).toString("utf8").trim();
		const why = corrupt ?? (said || exit.error?.message || `the mux exited (${exit.code ?? exit.signal})`);
		return { code: exit.code, signal: exit.signal, error: new Error(why) };
	});

	return {
		get pid() {
			return remotePid; // the worker's, on its host
		},
		stdout,
		stderr,
		fd3,
		fd4,
		exited,
		kill: () => mux.kill(),
		setRef: (ref) => mux.setRef(ref),
	};
}

function parseExit(text: string): ProcessExit {
	const [code, signal] = text.split(" ");
	return { code: code === "-" ? null : Number(code), signal: signal === "-" ? null : signal };
}
