/**
 * `python`: run code or a script in the session's persistent interpreter, and
 * `python_jobs`: list, check, wait for and cancel the session's background Python jobs.
 *
 * Preflight before any code is accepted: the backend, the working directory (through
 * the path guard: it must exist and be a directory), the interpreter, the argument shape and the
 * script (authorized, a readable file) are all checked before the coordinator sees the code or
 * starts a process. An invalid cwd fails before the code is looked at. The results' details are
 * typed in python-details.ts.
 */
import { KeelError } from "../boundary/errors.js";
import {
	type Accepted,
	number,
	object,
	oneOf,
	optional,
	string,
	withUnpublishedRange,
} from "../boundary/schema.js";
import type { PythonCoordinator } from "../python/coordinator.js";
import { DEFAULT_BACKGROUND_AFTER_MS } from "../python/coordinator.js";
import { outcomeToResult, renderJobList, renderRunning } from "../python/format.js";
import type { PythonJobInfo, PythonJobRequest } from "../python/types.js";
import type { ToolHost } from "../tool-host.js";
import type { PythonDetails, PythonJobsDetails } from "./python-details.js";
import { RANGES } from "./ranges.js";
import { defineTool, type ToolResult, text } from "./types.js";

const MAX_CODE_CHARS = 4_000_000;
const MAX_SCRIPT_BYTES = 8 * 1024 * 1024;

/** Seconds to ms; the schema has checked the range (RANGES.timeoutSeconds / waitSeconds). */
function timeoutMs(timeout: number | undefined): number | undefined {
	return timeout === undefined ? undefined : timeout * 1000;
}

/** The working directory: authorized for reading, existing, a directory. */
async function preflightCwd(host: ToolHost, cwd: string | undefined): Promise<string> {
	const dir = await host.resolvePath(cwd ?? ".", "read");
	const shown = cwd ?? dir.canonical;
	if (!dir.exists) {
		throw new KeelError("NOT_FOUND", `cwd ${shown} does not exist; give an existing directory.`, {
			path: shown,
		});
	}
	// A root was checked to be a directory when the session was made; other paths are checked here
	// (on ssh this stat is a process on the host, most of a warm call's cost).
	if (dir.relative === "") return dir.canonical;
	const st = await host.files.stat(dir.canonical);
	if (st.type !== "dir") {
		throw new KeelError("NOT_DIRECTORY", `cwd ${shown} is not a directory; give a directory.`, {
			path: shown,
		});
	}
	return dir.canonical;
}

/** The script: authorized for reading, a regular file, read once (the worker runs these bytes). */
async function preflightScript(
	host: ToolHost,
	scriptPath: string,
): Promise<{ path: string; source: Buffer }> {
	const file = await host.resolvePath(scriptPath, "read");
	if (!file.exists) {
		throw new KeelError("NOT_FOUND", `scriptPath ${scriptPath} does not exist; check it with ls or find.`, {
			path: scriptPath,
		});
	}
	const st = await host.files.stat(file.canonical);
	if (st.type === "dir") {
		throw new KeelError("IS_DIRECTORY", `scriptPath ${scriptPath} is a directory; give a .py file.`, {
			path: scriptPath,
		});
	}
	if (st.type !== "file") {
		throw new KeelError("NOT_A_FILE", `scriptPath ${scriptPath} is not a regular file.`, {
			path: scriptPath,
		});
	}
	if (st.size > MAX_SCRIPT_BYTES) throw scriptTooLarge(scriptPath, st.size);
	// As opened (the handle's size bounds it): a replace since the stat runs the newer script.
	const fs = host.files;
	const now = await fs.readCurrent(file.canonical, MAX_SCRIPT_BYTES);
	if (!now.bytes) throw scriptTooLarge(scriptPath, now.stat.size);
	return { path: file.canonical, source: now.bytes };
}

function scriptTooLarge(scriptPath: string, size: number): KeelError {
	return new KeelError(
		"INVALID_ARGS",
		`scriptPath ${scriptPath} is ${size} bytes; scripts over ${MAX_SCRIPT_BYTES} bytes are refused.`,
		{ path: scriptPath },
	);
}

/** python's arguments: the schema's type. */
export type PythonArgs = Accepted<typeof pythonSchema>;

const pythonSchema = object({
	code: optional(
		string({
			description: "State persists between calls.",
		}),
	),
	scriptPath: optional(
		string({
			description: "Run as `python script.py` (fresh __main__).",
		}),
	),
	cwd: optional(string()),
	timeout: optional(
		withUnpublishedRange(
			number({
				description: "Seconds; on timeout the interpreter restarts, losing its state.",
			}),
			RANGES.timeoutSeconds,
		),
	),
});

export const pythonTool = defineTool({
	name: "python",
	label: "python",
	description:
		"Run Python 3 code (or scriptPath) in this session's persistent interpreter; returns stdout, stderr, a final expression's repr or the traceback, each its last 2000 lines or 50KB. Past 15 s it goes on as a python_jobs job.",
	parameters: pythonSchema,
	annotations: { readOnly: false, destructive: true, idempotent: false },
	execute(args, { host, signal }): Promise<ToolResult<PythonDetails>> {
		const coordinator = host.python;
		return coordinator.inOrder(() => runPython(host, coordinator, args, signal));
	},
});

async function runPython(
	host: ToolHost,
	coordinator: PythonCoordinator,
	args: PythonArgs,
	signal: AbortSignal | undefined,
): Promise<ToolResult<PythonDetails>> {
	{
		const cwd = await preflightCwd(host, args.cwd);
		await coordinator.preflight(cwd);
		if ((args.code === undefined) === (args.scriptPath === undefined)) {
			throw new KeelError("INVALID_ARGS", "Give exactly one of code and scriptPath.");
		}
		const ms = timeoutMs(args.timeout);
		let request: PythonJobRequest;
		if (args.scriptPath !== undefined) {
			const script = await preflightScript(host, args.scriptPath);
			request = { kind: "script", path: script.path, source: script.source, cwd, timeoutMs: ms };
		} else {
			const code = args.code!;
			if (code.length > MAX_CODE_CHARS) {
				throw new KeelError(
					"INVALID_ARGS",
					`code is ${code.length} characters; write it to a file and use scriptPath instead.`,
				);
			}
			request = { kind: "code", code, cwd, timeoutMs: ms };
		}
		const run = await coordinator.run(request, { signal });
		if (run.status === "running") {
			const r = renderRunning(run.job, coordinator.backgroundAfterMs);
			return { content: [text(r.text)], details: r.details };
		}
		const r = outcomeToResult(run.outcome);
		return { content: [text(r.text)], details: r.details };
	}
}

/** python_jobs' arguments: the schema's type. */
export type PythonJobsArgs = Accepted<typeof jobsSchema>;

const jobsSchema = object({
	action: oneOf(["list", "status", "wait", "cancel"]),
	jobId: optional(string({ description: "From a python call." })),
	timeout: optional(
		withUnpublishedRange(
			number({ description: `wait: seconds (default ${DEFAULT_BACKGROUND_AFTER_MS / 1000}).` }),
			RANGES.waitSeconds,
		),
	),
});

function jobResult(job: PythonJobInfo): ToolResult<PythonDetails> {
	const r = job.outcome ? outcomeToResult(job.outcome) : renderRunning(job);
	return { content: [text(r.text)], details: r.details };
}

export const pythonJobsTool = defineTool({
	name: "python_jobs",
	label: "python jobs",
	description:
		"Python runs past 15 s: list, status, wait for the result, or cancel (restarts the interpreter, losing its state).",
	parameters: jobsSchema,
	annotations: { readOnly: false, destructive: true, idempotent: false },
	async execute(args, { host, signal }): Promise<ToolResult<PythonJobsDetails>> {
		const coordinator = host.python;
		if (args.action === "list") {
			const r = renderJobList(coordinator.list());
			return { content: [text(r.text)], details: r.details };
		}
		if (args.jobId === undefined) throw new KeelError("INVALID_ARGS", `action ${args.action} needs a jobId.`);
		switch (args.action) {
			case "status":
				return jobResult(coordinator.status(args.jobId));
			case "wait": {
				const ms = timeoutMs(args.timeout) ?? DEFAULT_BACKGROUND_AFTER_MS;
				return jobResult(await coordinator.wait(args.jobId, { timeoutMs: ms, signal }));
			}
			case "cancel": {
				const before = coordinator.status(args.jobId);
				const after = coordinator.cancel(args.jobId);
				const note = before.outcome
					? `Job ${after.jobId} had already finished (${before.outcome.exitState}).`
					: after.outcome?.workerReset
						? `Job ${after.jobId} was cancelled; the interpreter was restarted and its state is lost.`
						: `Job ${after.jobId} was cancelled before it started.`;
				return {
					content: [text(note)],
					details: { jobId: after.jobId, exitState: after.outcome?.exitState },
				};
			}
		}
	},
});
