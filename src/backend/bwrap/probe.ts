/**
 * Whether bubblewrap can build our sandbox here: run it once with `true` and exactly the options
 * every command gets. A failure becomes BACKEND_UNAVAILABLE naming the fix.
 */
import { KeelError } from "../../boundary/errors.js";
import { runInGroup } from "../run-group.js";
import type { LaunchPlan } from "./launch.js";

const PROBE_TIMEOUT_MS = 10_000;

const INSTALL_HINT = "install it (apt-get install bubblewrap, dnf install bubblewrap or apk add bubblewrap)";
const USERNS_HINT =
	"allow unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1; on Ubuntu 23.10+ " +
	"sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap; in a " +
	"container, run it with a seccomp profile that allows unshare/clone, or install bwrap setuid)";

/** The fix for a bwrap start-up failure, from its stderr. */
export function explainBwrapFailure(stderr: string): string {
	const s = stderr.trim();
	if (/Unknown option --(ro-)?bind-fd/.test(s)) {
		return `this bubblewrap cannot mount by descriptor (${s}), which keel needs to mount exactly what it checked; install bubblewrap 0.8 or newer.`;
	}
	if (/namespace|uid map|setgroups|unshare|Operation not permitted|No permissions/i.test(s)) {
		return `bubblewrap cannot create its namespaces here (${s}); ${USERNS_HINT}.`;
	}
	return `bubblewrap failed to start a sandbox: ${s || "no error output"}.`;
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
		const why = code === "ENOENT" ? `${bwrap} is not installed` : `${bwrap} cannot be run (${code})`;
		throw new KeelError("BACKEND_UNAVAILABLE", `bubblewrap is unavailable: ${why}; ${INSTALL_HINT}.`, {
			cause: e,
		});
	} finally {
		opened.close();
	}
	if (result.timedOut) {
		throw new KeelError(
			"BACKEND_UNAVAILABLE",
			`bubblewrap did not start a sandbox within ${PROBE_TIMEOUT_MS} ms.`,
		);
	}
	if (result.exitCode !== 0) {
		throw new KeelError("BACKEND_UNAVAILABLE", explainBwrapFailure(stderr), { details: { stderr } });
	}
}
