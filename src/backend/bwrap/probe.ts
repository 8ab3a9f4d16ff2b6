/**
 * Whether bubblewrap can build our sandbox here: run it once with `true` and exactly the options
 * every command gets. A failure is the fact sandbox-unavailable, saying which trouble it was
 * (backend-facts.ts words it with the fix).
 */
import { type BackendFactError, backendFact, type SandboxTrouble } from "../../boundary/backend-facts.js";
import { runInGroup } from "../run-group.js";
import type { LaunchPlan } from "./launch.js";

const PROBE_TIMEOUT_MS = 10_000;

/** What kept bwrap from starting, from its stderr. */
function troubleOf(stderr: string): SandboxTrouble {
	const s = stderr.trim();
	if (/Unknown option --(ro-)?bind-fd/.test(s)) return "no-bind-fd";
	if (/namespace|uid map|setgroups|unshare|Operation not permitted|No permissions/i.test(s))
		return "no-namespaces";
	return "failed";
}

/** A bwrap start-up failure, from its stderr, as the fact with its fix. */
export function bwrapFailure(stderr: string): BackendFactError {
	return backendFact("sandbox-unavailable", { why: troubleOf(stderr), reason: stderr.trim(), stderr });
}

/** The fix for a bwrap start-up failure, from its stderr (the message of bwrapFailure). */
export function explainBwrapFailure(stderr: string): string {
	return bwrapFailure(stderr).message;
}

/** Resolves when a sandboxed `true` exits 0; otherwise throws BACKEND_UNAVAILABLE. */
export async function probeBwrap(bwrap: string, plan: LaunchPlan): Promise<void> {
	let stderr = "";
	let result: Awaited<ReturnType<typeof runInGroup>>;
	const opened = plan.open();
	try {
		result = await runInGroup({
			argv: [bwrap, ...plan.options(3), "--chdir", "/", "--", "true"],
			inheritFds: opened.fds,
			timeoutMs: PROBE_TIMEOUT_MS,
			onData: (c, stream) => {
				if (stream === "stderr" && stderr.length < 4096) stderr += c.toString("utf8");
			},
		});
	} catch (e) {
		const code = (e as NodeJS.ErrnoException).code;
		throw backendFact(
			"sandbox-unavailable",
			code === "ENOENT"
				? { why: "not-installed", tool: bwrap }
				: { why: "cannot-run", tool: bwrap, reason: code },
			{ cause: e },
		);
	} finally {
		opened.close();
	}
	if (result.timedOut) {
		throw backendFact("sandbox-unavailable", { why: "timed-out", timeoutMs: PROBE_TIMEOUT_MS });
	}
	if (result.exitCode !== 0) {
		throw bwrapFailure(stderr);
	}
}
