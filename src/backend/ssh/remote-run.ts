/**
 * The command runner (src/backend/remote/host/runner*.py): one long-lived `python3` on the host,
 * on its own channel, that starts each command (`bash --norc --noprofile -c CMD`, else `sh -c`)
 * without a shell, `setsid` or `cat` relay of its own: posix_spawn with a new session (glibc's vfork and exec; else subprocess.Popen,
 * see runner_procs.py). What carries over between commands is the file system only: every command gets the runner's start-up environment afresh (plus its own env and
 * a fresh KEEL_CALL_TAG made by the client), its own session and process group, stdin from /dev/null, and one pipe
 * for stdout and stderr together.
 *
 * When the command's leader exits, the runner waits up to 250 ms for output still held open by
 * background children, then kills the group and every process created since the command started
 * whose environment holds its tag (a daemon that left the group with setsid included; repeated
 * until a pass finds none, killed ones still dying included, up to 2 s, other commands served
 * meanwhile), and only then reaps the leader and sends its end, so its pid (and group id) cannot
 * be reused while the group is killed, and the call returns with nothing of it alive. Abort and timeout: the same at once. When its channel closes
 * (the connection dropped, the backend closed), it does that for every command and exits.
 *
 * Requests: JSON lines `["r", id, cwd, command, {env}, tag]`, `["k", id]` (kill), `["s", tag]` (sweep a
 * tag of a runner that died, over every process); for process handles (runner_live.py, run-live.ts)
 * `["l", id, cwd, command, {env}, tag, cols, rows]` (start; cols 0: pipes), `["w", id, seq, base64]`,
 * `["c", id]` (end stdin), `["g", id, SIGNAME]`, and `k`. A handle's frames: p, o, `a` (write seq
 * done: "seq 1|0"), `x` ("c CODE" or "s SIGNAL"), `e` (end of output), `n`, d. Answers: binary frames, a 9-byte header (kind,
 * id as uint32, payload length as uint32) and the payload; a command's output travels only
 * inside `o` frames, so nothing it prints can look like a frame. Kinds: `h` ready; `p` started
 * (pid and start time; before the job's other frames, within 5 ms); `o` output; `x` exit status (128+n for a signal); `n` no such cwd; `d`
 * done (always last for an id). Frames are written together once per turn of the loop.
 */
import { hostProgram, joinHostFiles } from "../remote/host-programs.js";
import { pythonInit } from "./remote-lib.js";

/**
 * The runner's Python program, read on first use: its globals and frames, the process handling
 * (runner_procs.py: the pids since a mark, the sweep of a call tag, starting a command), the process
 * handles (runner_live.py), the loop.
 */
export const runnerSource = hostProgram(() =>
	joinHostFiles(["runner_head.py", "runner_procs.py", "runner_live.py", "runner.py"]),
);

/** Sent to a fresh startShell channel: become the runner, or exit 127 when there is no python3. */
export function runnerInit(path?: string): string {
	return pythonInit(runnerSource(), path);
}
