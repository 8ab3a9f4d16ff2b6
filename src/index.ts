/** keel's public API: sessions, backends, tools and their types. */

export {
	type BwrapBackend,
	type BwrapBackendOptions,
	createBwrapBackend,
	createBwrapTransport,
} from "./backend/bwrap.js";
export {
	type AiSdkSandboxSession,
	aiSdkSandboxTransport,
	createAiSdkSandboxBackend,
} from "./backend/container/ai-sdk.js";
export {
	type ContainerBackend,
	type ContainerBackendOptions,
	type ContainerTarget,
	createContainerBackend,
	type EngineTarget,
	engineTarget,
	type KubectlTarget,
	kubectlTarget,
} from "./backend/container/index.js";
export { type ContainerSpec, parseContainerSpec } from "./backend/container/spec.js";
export { createExecBackend, type ExecBackendOptions, type ExecTransport } from "./backend/exec/index.js";
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
export {
	SMOKE_DEFAULTS,
	type SmokeKind,
	type SmokeOptions,
	type SmokeResult,
	smokeTestExtension,
} from "./extensions/smoke.js";
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

import { Session, type SessionOptions } from "./session.js";
export function createSession(opts?: SessionOptions): Promise<Session> {
	return Session.create(opts);
}
