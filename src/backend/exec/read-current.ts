/**
 * The exec backend's FileOps.readCurrent: the file as opened, in one transport call. The bytes
 * come with the stat of the descriptor they were read from, so another writer's replace between
 * the tool's stat and this read is the newer file read, not CHANGED_ON_DISK.
 *
 * Where the target has python3 the file is opened there without following a link and without
 * waiting on a FIFO (O_NOFOLLOW | O_NONBLOCK); anything but a regular file is refused. Without it
 * the sh script tests the name, opens it, and after the open requires the name to be a regular
 * file (not a link) with the descriptor's device and inode: a link swapped in for the last
 * component is refused, not followed out of the root. A FIFO renamed in between the test and the
 * open holds that script until a writer comes (sh cannot open without waiting).
 *
 * Output: `st STAT\n` then the bytes, or `big STAT\n` alone when the file as opened is larger than
 * the bound. STAT is the target's stat(1) line (statFormat). Bounded, exactly the size at the open
 * is read; fewer bytes (a truncation meanwhile) are CHANGED_ON_DISK.
 *
 * The python source goes inside single quotes in the sh script: it must never contain one.
 */
import { KeelError } from "../../boundary/errors.js";
import type { FileStat } from "../types.js";
import { EXIT } from "./errors.js";

const PYTHON = `import os, sys, stat
p, limit, precise = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
def tm(ns):
    return "%d.%09d" % divmod(ns, 10**9) if precise else "%d" % (ns // 10**9)
try:
    f = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
except OSError as e:
    sys.stderr.write(os.strerror(e.errno) + "\\n")
    sys.exit(1)
st = os.fstat(f)
if stat.S_ISDIR(st.st_mode):
    sys.exit(${EXIT.EISDIR})
if not stat.S_ISREG(st.st_mode):
    sys.exit(${EXIT.SWAPPED})
os.set_blocking(f, True)
line = "%x %d %d %d %s %s" % (st.st_mode, st.st_size, st.st_dev, st.st_ino, tm(st.st_mtime_ns), tm(st.st_ctime_ns))
out = sys.stdout.buffer
if limit != "" and st.st_size > int(limit):
    out.write(("big " + line + "\\n").encode())
    sys.exit(0)
out.write(("st " + line + "\\n").encode())
left = st.st_size if limit != "" else -1
while left != 0:
    b = os.read(f, 1 << 20 if left < 0 else min(1 << 20, left))
    if not b:
        break
    out.write(b)
    if left > 0:
        left -= len(b)
out.flush()
`;

/** readCurrent PATH LIMIT PYTHON (LIMIT empty: unbounded; PYTHON empty: the sh path). */
export function readCurrentScript(fmt: string, precise: boolean): string {
	return `LC_ALL=C; export LC_ALL
if [ -n "$3" ]; then exec "$3" -I -S -c '${PYTHON}' "$1" "$2" ${precise ? 1 : 0}; fi
if [ -L "$1" ]; then exit ${EXIT.ELOOP}; fi
if [ ! -e "$1" ]; then exit ${EXIT.ENOENT}; fi
if [ -d "$1" ]; then exit ${EXIT.EISDIR}; fi
[ -f "$1" ] || exit ${EXIT.SWAPPED}
exec <"$1" || exit 1
s=$(stat -L -c '${fmt}' -) || exit 1
set -- "$1" "$2" $s
[ $((0x$3 & 61440)) -eq 32768 ] || exit ${EXIT.SWAPPED}
[ ! -L "$1" ] && [ "$(stat -c '%d %i' -- "$1")" = "$5 $6" ] || exit ${EXIT.SWAPPED}
if [ -n "$2" ] && [ "$4" -gt "$2" ]; then printf 'big %s\\n' "$s"; exit 0; fi
printf 'st %s\\n' "$s"
if [ -z "$2" ]; then exec cat; fi
exec head -c "$4"
`;
}

/** The script's output: its stat line and the bytes (null: larger than the bound). */
export function parseReadCurrent(
	out: Buffer,
	path: string,
	bounded: boolean,
	parseStat: (line: string) => FileStat,
): { stat: FileStat; bytes: Buffer | null } {
	const eol = out.indexOf(10);
	const head = out.subarray(0, eol < 0 ? out.length : eol).toString("utf8");
	const space = head.indexOf(" ");
	const kind = head.slice(0, space);
	if (eol < 0 || (kind !== "st" && kind !== "big")) {
		throw new KeelError(
			"IO_ERROR",
			`Unexpected read output from the exec backend for ${path}: ${head.slice(0, 200)}`,
			{
				path,
			},
		);
	}
	const stat = parseStat(head.slice(space + 1));
	if (kind === "big") return { stat, bytes: null };
	const bytes = out.subarray(eol + 1);
	if (bounded && bytes.length !== stat.size) {
		throw new KeelError("CHANGED_ON_DISK", `${path} was truncated while it was being read; read it again.`, {
			path,
		});
	}
	return { stat, bytes };
}
