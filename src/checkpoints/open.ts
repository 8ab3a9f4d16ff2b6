/**
 * A session's checkpoints on its backend: this machine's files (local, bwrap) are scanned here,
 * a remote host's (ssh and the containers that run over its host layer) by keel's helper on that
 * host. Loaded only by a session that keeps checkpoints.
 */
import type { Backend } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import type { StateDir } from "../safety/state-dir.js";
import { type CheckpointHost, Checkpoints } from "./checkpoints.js";
import { RemoteTreeSource } from "./remote-source.js";
import { type CheckpointBudgets, DEFAULT_BUDGETS } from "./types.js";

export async function openCheckpoints(
	host: CheckpointHost,
	backend: Backend,
	where: { roots: readonly string[]; state: StateDir; filesAreLocal: boolean },
	option: true | Partial<CheckpointBudgets>,
): Promise<Checkpoints> {
	const budgets = { ...DEFAULT_BUDGETS, ...(option === true ? {} : option) };
	if (where.filesAreLocal) return Checkpoints.openLocal(host, where.roots, where.state, budgets);
	if (backend.process && backend.hostPrograms) {
		const source = await RemoteTreeSource.open(backend.process, where.roots, budgets);
		return new Checkpoints(host, source, budgets);
	}
	throw new KeelError(
		"UNSUPPORTED",
		`checkpoints are kept where keel can scan the files: on this machine (local, bwrap) or through its host programs (ssh, podman, docker, k8s); this session's backend (${backend.kind}) is neither.`,
	);
}
