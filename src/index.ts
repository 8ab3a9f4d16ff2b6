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
export { createLocalBackend, type LocalBackendOptions } from "./backend/local.js";
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
export type { SmokeKind, SmokeOptions, SmokeResult } from "./extensions/smoke.js";
export { SMOKE_DEFAULTS } from "./extensions/smoke-defaults.js";
export type { RecoveryReport } from "./safety/recovery.js";
export {
	type CallError,
	type CallOptions,
	type CallResult,
	Session,
	type SessionOptions,
} from "./session.js";
export { type ApplyPatchArgs, applyPatch, type PatchFileResult } from "./tools/apply-patch.js";
export { PROFILES, type Profile, toolsForProfile } from "./tools/registry.js";
export type { Content, ToolAnnotations, ToolDefinition, ToolResult } from "./tools/types.js";

import type { SmokeOptions, SmokeResult } from "./extensions/smoke.js";
import { Session, type SessionOptions } from "./session.js";
export function createSession(opts?: SessionOptions): Promise<Session> {
	return Session.create(opts);
}

/** Load and exercise an extension draft in a contained child process (extensions/smoke.ts, imported on first use). */
export async function smokeTestExtension(path: string, opts?: SmokeOptions): Promise<SmokeResult> {
	return (await import("./extensions/smoke.js")).smokeTestExtension(path, opts);
}
