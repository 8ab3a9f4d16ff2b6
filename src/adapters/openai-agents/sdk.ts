/** @openai/agents, loaded once for this adapter's files (an optional peer: a clear error when absent). */
import { importPeer } from "../peer.js";
import type { AgentsSdk } from "./types.js";

// `as string` keeps the compiler from resolving the peer; the emitted import stays a literal.
export const agents = await importPeer(
	"@openai/agents",
	"keel/openai-agents",
	() => import("@openai/agents" as string) as Promise<AgentsSdk>,
);
