/** @openai/agents, loaded once for this adapter's files (an optional peer: a clear error when absent). */
import { importPeer } from "../peer.js";

type AgentsSdk = typeof import("@openai/agents");

export const agents: AgentsSdk = await importPeer(
	"@openai/agents",
	"keel/openai-agents",
	() => import("@openai/agents"),
);
