/** keel's public API: sessions, backends, tools and their types. */

export {
	type BwrapBackend,
	type BwrapBackendOptions,
	createBwrapBackend,
	createBwrapTransport,
} from "./backend/bwrap.js";
export type { AiSdkSandboxSession } from "./backend/container/ai-sdk.js";
export type {
	ContainerBackend,
	ContainerBackendOptions,
	ContainerTarget,
	EngineTarget,
	KubectlTarget,
} from "./backend/container/index.js";
export { type ContainerSpec, parseContainerSpec } from "./backend/container/spec.js";
export { engineTarget, kubectlTarget } from "./backend/container/targets.js";
// The backends a local session does not use are imported when first used (backend/deferred.ts).
export {
	aiSdkSandboxTransport,
	createAiSdkSandboxBackend,
	createContainerBackend,
	createExecBackend,
} from "./backend/deferred.js";
export type { ExecBackendOptions, ExecTransport } from "./backend/exec/index.js";
export { createLocalBackend, type LocalBackendOptions } from "./backend/local/index.js";
export { createSshBackend, type SshBackend, type SshBackendOptions } from "./backend/ssh/index.js";
export { parseSshSpec, type SshSpec } from "./backend/ssh/spec.js";
export type * from "./backend/types.js";
export {
	ERROR_CATALOGUE,
	type ErrorCode,
	KeelError,
	type RetryClass,
	type SerializedError,
} from "./boundary/errors.js";
export { FailureMemory, type FailureRecord } from "./boundary/failure-memory.js";
export { fingerprint, structuralPreview } from "./boundary/fingerprint.js";
export type { ExtensionRegistrations, ToolRegistration } from "./extensions/report.js";
export type { SmokeKind, SmokeResult } from "./extensions/smoke.js";
export { SMOKE_DEFAULTS } from "./extensions/smoke-defaults.js";
export type { RecoveryReport } from "./safety/recovery.js";
export type {
	CallError,
	CallOptions,
	CallResult,
	SessionApi as Session,
	SessionCheckpoints,
	SessionFailures,
	SessionOptions,
	ToolArgs,
	ToolDetails,
	ToolName,
} from "./session-types.js";
export type { ApplyPatchArgs, ApplyPatchDetails, PatchFileResult } from "./tools/apply-patch.js";
export type { BashArgs, BashDetails } from "./tools/bash.js";
export type { CheckpointsArgs, CheckpointsDetails } from "./tools/checkpoints.js";
export type { ListDirArgs, ReadFileArgs, ShellArgs } from "./tools/codex.js";
export type { ExecCommandArgs, ExecDetails, WriteStdinArgs } from "./tools/codex-exec.js";
export type { EditArgs, EditDetails } from "./tools/edit.js";
export type { FileDetails, QueryResult } from "./tools/file.js";
export type { EditItem, FileArgs, FileQuery } from "./tools/file-schema.js";
export type { FindArgs, FindDetails } from "./tools/find.js";
export type { GrepArgs, GrepDetails } from "./tools/grep.js";
export type { LsArgs, LsDetails } from "./tools/ls.js";
export type {
	ProcessArgs,
	ProcessDetails,
	ProcessKillDetails,
	ProcessListDetails,
	ProcessReadDetails,
} from "./tools/process.js";
export type { PythonArgs, PythonJobsArgs } from "./tools/python.js";
export type {
	PythonCancelDetails,
	PythonDetails,
	PythonJobListDetails,
	PythonJobSummary,
	PythonJobsDetails,
	PythonOutcomeDetails,
	PythonRunningDetails,
	PythonStreamDetails,
} from "./tools/python-details.js";
export type { ReadArgs, ReadDetails } from "./tools/read.js";
export type { ReadBytesDetails } from "./tools/read-bytes.js";
export type { ImageDetails } from "./tools/read-image.js";
export { PROFILES, type Profile, toolsForProfile } from "./tools/registry.js";
export type {
	Content,
	ImageContent,
	TextContent,
	ToolAnnotations,
	ToolDefinition,
	ToolResult,
} from "./tools/types.js";
export type { WriteArgs, WriteDetails } from "./tools/write.js";

import type { SmokeOptions as DraftSmokeOptions, SmokeResult } from "./extensions/smoke.js";
import { publicSession, Session, sessionInternals } from "./session.js";
import type { CallOptions, CallResult, SessionApi, SessionOptions } from "./session-types.js";
import { type ApplyPatchDetails, unifiedApplyPatchTool } from "./tools/apply-patch.js";
import { type ReadBytesDetails, readBytesTool } from "./tools/read-bytes.js";
import type { Profile } from "./tools/registry.js";

/**
 * Open a session: the tools of `opts.profile` (default "pi") over the workspace `opts.root`
 * (default: the current directory), on `opts.backend` (default: this machine). The returned
 * session's `call` is typed by the profile's tools.
 *
 * Throws a KeelError (INVALID_ARGS) for an option, profile or tool name keel does not know, and
 * whatever stops the backend or the workspace from opening; tool calls never throw.
 *
 * @example
 * ```ts
 * await using session = await createSession({ root: ".", profile: "unified" });
 * const r = await session.call("bash", { command: "ls" });
 * if (r.ok) console.log(r.content, r.details?.truncation);
 * ```
 */
export async function createSession<P extends Profile = "pi">(
	opts?: SessionOptions & { profile?: P },
): Promise<SessionApi<P>> {
	return publicSession<P>(await Session.create(opts));
}

/** Options of the library's {@link applyPatch}. */
export interface ApplyPatchOptions extends CallOptions {}

/**
 * Apply a patch in Codex's format (`*** Begin Patch` ... `*** End Patch`) to the session's
 * workspace, all files or none, whatever tools the session's profile offers: the same operation
 * as the apply_patch tool, as a call (checked, timed, remembered by the failure memory, a
 * checkpoint when the session keeps them).
 *
 * Like `session.call`, it never throws for a failed patch: the result is `{ ok: false, error }`
 * (NO_MATCH, WRITE_COLLISION, INVALID_ARGS for a malformed patch, ...), and nothing changed.
 */
export function applyPatch(
	session: SessionApi,
	input: string,
	opts: ApplyPatchOptions = {},
): Promise<CallResult<ApplyPatchDetails>> {
	return sessionInternals(session).callTool(unifiedApplyPatchTool, { input }, opts) as Promise<
		CallResult<ApplyPatchDetails>
	>;
}

/** Options of the library's {@link readFileBytes}. */
export interface ReadFileBytesOptions extends CallOptions {
	/** The most bytes to hold (default 64 MiB): a larger file is TOO_LARGE, and nothing is read. */
	maxBytes?: number;
}

/**
 * A file's bytes exactly as they are on disk, through the session's roots and path checks, on
 * its backend: what a host needs to download a file (the read tool gives a model text, with its
 * line ends and encoding normalised). The read is not recorded: it does not let a later write
 * replace the file without a read. Never throws: a failure is `{ ok: false, error }` (NOT_FOUND,
 * IS_DIRECTORY, PATH_OUTSIDE_ROOTS, TOO_LARGE, ...).
 */
export function readFileBytes(
	session: SessionApi,
	path: string,
	opts: ReadFileBytesOptions = {},
): Promise<CallResult<ReadBytesDetails>> {
	const { maxBytes, ...call } = opts;
	const args = maxBytes === undefined ? { path } : { path, maxBytes };
	return sessionInternals(session).callTool(readBytesTool, args, call) as Promise<
		CallResult<ReadBytesDetails>
	>;
}

/** Options of {@link smokeTestExtension}. */
export interface SmokeOptions extends Omit<DraftSmokeOptions, "session"> {
	/** Resolve the draft through this session's path guard (its files must be on this machine). */
	session?: SessionApi;
}

/**
 * Load and exercise an extension draft in a contained child process (imported on first use): what
 * it registered, or why it could not load. The outcome is a result (`ok`, `kind`), never a throw.
 */
export async function smokeTestExtension(path: string, opts: SmokeOptions = {}): Promise<SmokeResult> {
	const session = opts.session && sessionInternals(opts.session);
	return (await import("./extensions/smoke.js")).smokeTestExtension(path, { ...opts, session });
}
