/**
 * Test sessions with a Python coordinator attached.
 *
 * The pi profile has no python tools: tests attach the coordinator as an own `python` property (what
 * ToolHost.python holds) and the tools into the session's palette, so calls go through Session.call
 * like any other tool. Each test session gets its own coordinator on the session's backend, with
 * test options (short background threshold, memory limit).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { PythonCoordinator, type PythonCoordinatorOptions } from "../../src/python/coordinator.js";
import type { PythonJobEvent } from "../../src/python/types.js";
import { Session, type SessionOptions } from "../../src/session.js";
import { pythonJobsTool, pythonTool } from "../../src/tools/python.js";
import type { ToolDefinition } from "../../src/tools/types.js";

function detectPython(): string | undefined {
	const candidates = [process.env.KEEL_PYTHON, "/usr/bin/python3", "python3"].filter(Boolean) as string[];
	for (const c of candidates) {
		if (c.includes("/") && !existsSync(c)) continue;
		try {
			execFileSync(c, ["-c", "import sys; assert sys.version_info >= (3, 8)"], { stdio: "ignore" });
			return c;
		} catch {
			// try the next one
		}
	}
	return undefined;
}

export const PYTHON = detectPython();
export const NO_PYTHON = PYTHON === undefined;
if (NO_PYTHON) console.warn("python3 not found: the python tests are skipped");

export interface PySession {
	session: Session;
	python: PythonCoordinator;
	events: PythonJobEvent[];
	dir: string;
	dispose(): Promise<void>;
}

/**
 * A `make` for one test file: sessions it makes are disposed after each test (call at the top
 * level of the file).
 */
export function pySessions(): (...args: Parameters<typeof pySession>) => Promise<PySession> {
	const open: PySession[] = [];
	afterEach(async () => {
		for (const py of open.splice(0)) await py.dispose();
	});
	return async (...args) => {
		const py = await pySession(...args);
		open.push(py);
		return py;
	};
}

export async function pySession(
	opts: { session?: SessionOptions; python?: Partial<PythonCoordinatorOptions>; dir?: string } = {},
): Promise<PySession> {
	const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), "keel-py-")));
	const session = await Session.create({ root: dir, ...opts.session });
	const python = new PythonCoordinator({
		spill: session.spill,
		backend: session.backend,
		interpreter: session.backend.kind === "local" ? PYTHON : undefined,
		...opts.python,
	});
	Object.defineProperty(session, "python", { value: python, configurable: true });
	if (!session.tools.some((t) => t.name === "python")) {
		// The default (pi) profile has no python tools: add them to this session's palette.
		const palette = (session as unknown as { palette: { byName: Map<string, ToolDefinition> } }).palette
			.byName;
		for (const tool of [pythonTool, pythonJobsTool] as ToolDefinition[]) palette.set(tool.name, tool);
	}
	const events: PythonJobEvent[] = [];
	python.onEvent((e) => events.push(e));
	return {
		session,
		python,
		events,
		dir,
		async dispose() {
			await python.close();
			await session.close();
			if (!opts.dir) await rm(dir, { recursive: true, force: true });
		},
	};
}

/** The `end` events of one job (the fault matrix asserts there is exactly one). */
export function endsOf(events: PythonJobEvent[], jobId: string): PythonJobEvent[] {
	return events.filter((e) => e.type === "end" && e.job.jobId === jobId);
}

export function textOf(r: {
	ok: boolean;
	content?: { type: string; text?: string }[];
	error?: { message: string };
}) {
	if (!r.ok) return r.error?.message ?? "";
	return (r.content ?? []).map((c) => c.text ?? "").join("\n");
}

/** Resolves at the first event matching `pred` (including ones already recorded). */
export function nextEvent(py: PySession, pred: (e: PythonJobEvent) => boolean): Promise<PythonJobEvent> {
	const seen = py.events.find(pred);
	if (seen) return Promise.resolve(seen);
	return new Promise((resolve) => {
		const off = py.python.onEvent((e) => {
			if (!pred(e)) return;
			off();
			resolve(e);
		});
	});
}

/** Is a process alive? A zombie (killed, not yet reaped by its new parent) counts as dead. */
export function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
	} catch {
		return false;
	}
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
	} catch {
		return true; // no /proc: trust the signal probe
	}
}
