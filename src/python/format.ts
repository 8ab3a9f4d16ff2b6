/**
 * A job outcome as a tool result: text for the model (bounded: each stream is already capped by
 * its OutputSink, repr and traceback by the worker) and structured details for hosts.
 */
import { KeelError } from "../boundary/errors.js";
import { fullOutputNote, type OutputSnapshot } from "../boundary/output-sink.js";
import { DEFAULT_MAX_BYTES, formatSize } from "../boundary/truncate.js";
import type {
	PythonJobListDetails,
	PythonOutcomeDetails,
	PythonRunningDetails,
	PythonStreamDetails,
} from "../tools/python-details.js";
import type { PythonJobInfo, PythonJobOutcome } from "./types.js";

/** A rendering for the model (`text`) and for hosts (`details`, the tool's declared type). */
export interface RenderedOutcome<D = PythonOutcomeDetails> {
	text: string;
	details: D;
}

function streamText(s: OutputSnapshot): string {
	const t = s.truncation;
	if (!t.truncated) return s.content;
	const first = t.totalLines - t.outputLines + 1;
	const where = fullOutputNote(s);
	if (t.lastLinePartial)
		return `${s.content}\n\n[Showing last ${formatSize(t.outputBytes)} of line ${t.totalLines}. ${where}]`;
	const limit = t.truncatedBy === "bytes" ? ` (${formatSize(DEFAULT_MAX_BYTES)} limit)` : "";
	return `${s.content}\n\n[Showing lines ${first}-${t.totalLines} of ${t.totalLines}${limit}. ${where}]`;
}

function streamDetails(s: OutputSnapshot): PythonStreamDetails | undefined {
	if (!s.truncation.truncated) return undefined;
	// The kept text is the result's content already: details carry only the facts about it.
	const { content: _shown, ...truncation } = s.truncation;
	return { truncation, fullOutputPath: s.fullOutputPath, spillError: s.spillError };
}

export function resetNote(reason: string | undefined): string {
	return `[The Python worker was restarted before this call (${reason ?? "state lost"}); variables and imports from earlier calls are gone.]`;
}

export function renderOutcome(o: PythonJobOutcome): RenderedOutcome {
	const parts: string[] = [];
	if (o.stdout.content || o.stdout.truncation.truncated) parts.push(streamText(o.stdout));
	if (o.stderr.content || o.stderr.truncation.truncated) parts.push(`[stderr]\n${streamText(o.stderr)}`);
	if (o.repr !== undefined) parts.push(parts.length === 0 ? o.repr : `[result]\n${o.repr}`);
	if (o.exception) parts.push(o.exception.traceback.trimEnd());
	if (o.message) parts.push(o.message);
	let text = parts.length > 0 ? parts.join("\n\n") : "(no output)";
	if (o.stateReset) text = `${resetNote(o.resetReason)}\n\n${text}`;
	const details: PythonOutcomeDetails = {
		jobId: o.jobId,
		kind: o.kind,
		exitState: o.exitState,
		elapsedMs: o.elapsedMs,
		stateReset: o.stateReset,
		workerReset: o.workerReset,
		background: o.background,
	};
	if (o.workerElapsedMs !== undefined) details.workerElapsedMs = o.workerElapsedMs;
	if (o.workerPid !== undefined) details.workerPid = o.workerPid;
	if (o.resetReason !== undefined) details.resetReason = o.resetReason;
	if (o.exception) details.exception = { type: o.exception.type, message: o.exception.message };
	if (o.reprTruncated) details.reprTruncated = true;
	if (o.exitCode !== undefined) details.exitCode = o.exitCode;
	if (o.signal !== undefined) details.signal = o.signal;
	const stdout = streamDetails(o.stdout);
	const stderr = streamDetails(o.stderr);
	if (stdout) details.stdout = stdout;
	if (stderr) details.stderr = stderr;
	return { text, details };
}

/** The tool's view of an outcome: a result, or the KeelError for anything but a clean run. */
export function outcomeToResult(o: PythonJobOutcome): RenderedOutcome {
	const rendered = renderOutcome(o);
	const fail = (code: ConstructorParameters<typeof KeelError>[0]) =>
		new KeelError(code, rendered.text, { details: { ...rendered.details } });
	switch (o.exitState) {
		case "ok":
			return rendered;
		case "timeout":
			throw fail("TIMEOUT");
		case "aborted":
		case "cancelled":
		case "closed":
			throw fail("ABORTED");
		case "busy":
		case "spawn-failed":
			throw fail("BACKEND_UNAVAILABLE");
		default:
			// exception, memory, crashed, protocol-error: the code failed or killed its interpreter.
			throw fail("COMMAND_FAILED");
	}
}

export function renderRunning(
	job: PythonJobInfo,
	backgroundAfterMs?: number,
): RenderedOutcome<PythonRunningDetails> {
	const secs = ((job.runningMs ?? 0) / 1000).toFixed(1);
	const moved =
		backgroundAfterMs !== undefined
			? `It ran past ${backgroundAfterMs / 1000} s and continues in the background; `
			: "";
	return {
		text: `Python job ${job.jobId} is ${job.status} (${secs} s so far). ${moved}use python_jobs with {"action": "wait", "jobId": "${job.jobId}"} for its result, or "cancel" to stop it. The session's interpreter is busy until it ends.`,
		details: { jobId: job.jobId, status: job.status, lane: job.lane, runningMs: job.runningMs },
	};
}

export function renderJobList(jobs: PythonJobInfo[]): RenderedOutcome<PythonJobListDetails> {
	if (jobs.length === 0) return { text: "(no Python jobs)", details: { jobs: [] } };
	const lines = jobs.map((j) => {
		const secs = j.runningMs === undefined ? "-" : `${(j.runningMs / 1000).toFixed(1)} s`;
		const state = j.outcome ? `done (${j.outcome.exitState})` : j.status;
		return `${j.jobId}  ${state}  ${j.lane}  ${secs}  ${j.label}`;
	});
	return {
		text: lines.join("\n"),
		details: {
			jobs: jobs.map((j) => ({
				jobId: j.jobId,
				status: j.status,
				lane: j.lane,
				label: j.label,
				runningMs: j.runningMs,
				exitState: j.outcome?.exitState,
			})),
		},
	};
}
