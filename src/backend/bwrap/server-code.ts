/**
 * The command server that lives inside one long-lived sandbox (server.ts starts it):
 * src/backend/remote/host/bwrap_server.py, read on first use. Python, given inline on the command
 * line (`python3 -I -S -c`), so there is no file inside the sandbox that a command could replace,
 * and nothing is imported from the roots, the environment or a site dir.
 *
 * It is PID 1 of the sandbox's PID namespace (bwrap --as-pid-1): the kernel drops every signal sent
 * to a namespace's init from inside it unless init handles that signal, and this one handles none
 * (SIGKILL and SIGSTOP included), so a command cannot kill, stop or interrupt it. It makes itself
 * non-dumpable first, so a command (same uid, no capabilities) cannot ptrace it, read or write its
 * memory, or open its descriptors through /proc/1/fd. Its control channel is its stdin and stdout;
 * a command is started (posix_spawn: vfork and exec, no copy of the server) with fresh pipes, in a
 * session and process group of its own, and every other descriptor is close-on-exec.
 *
 * Protocol: one JSON object per line each way. In: {"run": id, "argv", "cwd", "env"} (with
 * "tty": [cols, rows]: in a pseudo-terminal), {"kill": id}, and for a command in a terminal
 * {"in": id, "d": base64} (typed) and {"signal": id, "n": number} (to its group). Out:
 * {"ready": 1}, {"i": id, "started": 1}, {"i": id, "o"|"e": base64}, {"i": id, "exit": code|null, "sig": n|null, "clean": bool},
 * {"tainted": why}. One command at a time.
 *
 * A terminal is made inside the sandbox (its own devpts instance, bwrap --dev): the command leads a
 * session of its own with the terminal's far end as 0, 1, 2 and its controlling terminal; the
 * server holds the near end, so nothing of the host's is handed in. When a command's leader exits (or it is killed), every other process in the namespace is
 * SIGKILLed, and only then does the reply go out. The rest of the cleanup runs after the reply,
 * while the host reads it, and always before the next request is read: /tmp and /dev/shm are
 * emptied, the namespace is swept once more, and the server checks nobody changed what its next
 * children would inherit (rlimits, nice value, CPU affinity, scheduling policy). If anything is
 * left, it says "tainted" and exits, and the host starts a new sandbox: a request already sent to
 * it gets no "started", so the host runs it in the new sandbox.
 */
import { hostProgram, readHostFile } from "../remote/host-programs.js";

/** The server's source, as passed to `python3 -I -S -c`. */
export const serverCode = hostProgram(() => readHostFile("bwrap_server.py"));
