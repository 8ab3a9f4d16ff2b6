/**
 * The fast file helper (src/backend/remote/host/file_helper*.py): one long-lived `python3` on the
 * host (when it has one) that answers the file facts and commits with system calls instead of a
 * `stat`, `sha256sum` or `mv` process per request. Each of those costs a fork and exec on the host (measured ~2.3 ms each on loopback,
 * against ~0.2 ms for the round trip itself), so a read or an edit spent most of its time starting
 * processes. Without python3 the shell helper (remote-lib.ts) does the same work.
 *
 * Requests are one JSON array per line, `[marker, fn, ...args]`; replies are the shell helper's:
 * output, then the record `\x1f<marker> r <status>\n` (framing.ts). Output texts match the shell
 * functions of the same name (stat lines, `changed`, `moved`, strerror texts), so fs.ts reads both
 * alike. What it adds over the shell: `k_read` (open without following a link, fstat that handle,
 * read it: no window between the check and the read) and `k_put` (the whole durable write of a
 * small file, compare-and-swap included, in one request).
 */
import { hostProgram, joinHostFiles } from "../remote/host-programs.js";
import { pythonInit } from "./remote-lib.js";

/** The functions the fast helper answers (all else goes to the shell helper). */
export const PY_FUNCS = new Set([
	"k_lstat",
	"k_stat",
	"k_hash",
	"k_read",
	"k_readc",
	"k_look",
	"k_swap",
	"k_fin",
	"k_rm",
	"k_put",
]);

/**
 * The helper's Python program (it serves requests on stdin until EOF), read on first use: the
 * durable replace it shares with the exec backend (durable.py: the stat line, the attributes, the
 * compare-and-swap), its own primitives (the pinned walk, opening without following a link),
 * k_look, then the request functions and the loop.
 */
export const pyHelperSource = hostProgram(() =>
	joinHostFiles(["durable.py", "file_helper_core.py", "file_helper_look.py", "file_helper.py"]),
);

/** Sent to a fresh startShell channel: become the helper, or exit 127 when there is no python3. */
export function pyInit(path?: string): string {
	return pythonInit(pyHelperSource(), path, ["-u"]);
}

/** A request line for the fast helper. */
export function pyRequest(marker: string, fn: string, args: string[]): string {
	return `${JSON.stringify([marker, fn, ...args])}\n`;
}
