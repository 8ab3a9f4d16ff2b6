/** keel's public API: sessions, backends, tools and their types. */
export { Session, type SessionOptions, type CallOptions, type CallResult } from "./session.js";
export { createLocalBackend, type LocalBackendOptions } from "./backend/local.js";
export type * from "./backend/types.js";
export {
	KeelError,
	ERROR_CATALOGUE,
	type ErrorCode,
	type RetryClass,
	type SerializedError,
} from "./boundary/errors.js";
export { toolsForProfile, PROFILES, type Profile } from "./tools/registry.js";
export type { ToolDefinition, ToolResult, Content, ToolAnnotations } from "./tools/types.js";

import { Session, type SessionOptions } from "./session.js";
export function createSession(opts?: SessionOptions): Promise<Session> {
	return Session.create(opts);
}
