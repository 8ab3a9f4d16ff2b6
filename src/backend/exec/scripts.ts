/**
 * The POSIX sh scripts behind the exec backend's file operations. Each operation is one transport
 * call: `sh -c SCRIPT keel ARGS...`, paths passed as arguments (never spliced into the text).
 *
 * Needs GNU coreutils and findutils on the target: `stat -c` with `%.9Y` (nanoseconds; without
 * them identity falls back to whole seconds and the hash carries the check), `realpath -e -z`,
 * `readlink -z`, `ln -T`, `mv -T`, `dd conv=excl`, `sync FILE`, `find -printf`, `sha256sum`.
 * busybox has `stat -c` without precision, no `-z`, no `ln -T` and no `conv=excl`: the probe
 * (PROBE below) refuses such a target rather than run with weaker guarantees.
 */
import { EXIT } from "./errors.js";
import { pythonTail } from "./replace-py.js";

const PRELUDE = "LC_ALL=C; export LC_ALL\n";

/** stat(1) format of a FileStat: raw mode (hex), size, dev, ino, mtime, ctime. */
export function statFormat(precise: boolean): string {
	return precise ? "%f %s %d %i %.9Y %.9Z" : "%f %s %d %i %Y %Z";
}

/**
 * `ident PATH`: raw mode (type and permission bits, decimal), size, dev, ino, mtime, ctime of the
 * entry itself (lstat). The mode counts: a chmod within one ctime tick leaves ctime as it was.
 */
function identFn(fmt: string): string {
	return `ident() { s=$(stat -c '${fmt}' -- "$1") || return 1; set -- $s; printf '%d %s %s %s %s %s' "$((0x$1))" "$2" "$3" "$4" "$5" "$6"; }\n`;
}

/**
 * Prints "ok", whether stat has nanoseconds and the shell, then on a second line the python3 that
 * can copy extended attributes (empty when none: /usr/bin/python3 first, for its start-up cost,
 * then PATH's); fails when a needed tool is missing or too weak.
 */
export const PROBE = `${PRELUDE}set -e
t=$(stat -c '%.9Y' /)
realpath -e -z / >/dev/null
readlink -z / >/dev/null || true
find / -maxdepth 0 -printf '' >/dev/null
printf '' | sha256sum >/dev/null
dd --version >/dev/null 2>&1
ln --help | grep -q -e '--no-target-directory'
mv --help | grep -q -e '--no-target-directory'
command -v bash >/dev/null 2>&1 && b=bash || b=sh
py=
for p in /usr/bin/python3 "$(command -v python3 2>/dev/null || :)"; do
  if [ -n "$p" ] && "$p" -I -S -c 'import os; os.listxattr; os.setxattr' >/dev/null 2>&1; then py=$p; break; fi
done
case $t in *.*) printf 'ok precise %s\\n%s' "$b" "$py";; *) printf 'ok coarse %s\\n%s' "$b" "$py";; esac
`;

export const REALPATH = `${PRELUDE}exec realpath -e -z -- "$1"\n`;

export function lstatScript(fmt: string): string {
	return `${PRELUDE}exec stat -c '${fmt}' -- "$1"\n`;
}

export function statScript(fmt: string): string {
	return `${PRELUDE}exec stat -L -c '${fmt}' -- "$1"\n`;
}

export const READLINK = `${PRELUDE}if [ ! -L "$1" ]; then
  if [ -e "$1" ]; then exit ${EXIT.EINVAL}; fi
  exit ${EXIT.ENOENT}
fi
exec readlink -z -- "$1"
`;

/**
 * readFile PATH [DEV INO]: refuses a link at the last component; with DEV INO the opened file must
 * be that one (fstat of the open descriptor, so a swap after the check is caught).
 */
export const READ_FILE = `${PRELUDE}if [ -L "$1" ]; then exit ${EXIT.ELOOP}; fi
if [ ! -e "$1" ]; then exit ${EXIT.ENOENT}; fi
if [ -d "$1" ]; then exit ${EXIT.EISDIR}; fi
exec <"$1" || exit 1
if [ -n "$2" ]; then
  [ "$(stat -L -c '%d %i' -)" = "$2 $3" ] || exit ${EXIT.SWAPPED}
fi
exec cat
`;

/** readdir DIR [DEV INO]: "TYPE-LETTER NAME\\0" per entry; DIR must be DEV INO before and after. */
export const READDIR = `${PRELUDE}d=$1 want=$2
chk() { [ -z "$want" ] || [ "$(stat -L -c '%d %i' -- "$d")" = "$want" ] || exit ${EXIT.SWAPPED}; }
if [ ! -d "$d" ]; then
  if [ -e "$d" ]; then exit ${EXIT.ENOTDIR}; fi
  exit ${EXIT.ENOENT}
fi
chk
find -H "$d" -mindepth 1 -maxdepth 1 -printf '%y%f\\0' || exit 1
chk
`;

export const MKDIRP = `${PRELUDE}exec mkdir -p -- "$1"\n`;

/**
 * The durable commit (REQUIREMENTS M4–M6, M12), run remotely:
 *   TARGET TEMP MODE EXPECT WANT_HASH WANT_ID NEW_HASH SOURCE SOURCE_ID PYTHON [ANCESTORS...]
 * EXPECT is absent | cas | none. The temp file is created exclusively (dd conv=excl) beside the
 * target, filled from stdin (or from SOURCE, which must still be SOURCE_ID), checked against
 * NEW_HASH (a transport that died mid-stream leaves a short temp: never committed), chmod'ed,
 * fsynced; then `ln -T` (no-clobber create), or hash + identity + `mv -T` (compare-and-swap), or
 * `mv -T`; then the directory is fsynced and the new stat printed. ANCESTORS (deepest first) are
 * given when missing parents may be created; a failed commit removes the ones it made. With
 * PYTHON (the probed python3), a replace of a regular file ends in replace-py.ts instead, which
 * also keeps the extended attributes; without it the sh tail keeps the owner (or refuses) and
 * refuses an unwritable file, but drops the attributes.
 */
export function writeScript(fmt: string, precise: boolean): string {
	return `${PRELUDE}${identFn(fmt)}t=$1 tmp=$2 mode=$3 expect=$4 want_hash=$5 want_id=$6 new_hash=$7 src=$8 src_id=$9 py=\${10}
shift 10
dir=\${tmp%/*}; [ -n "$dir" ] || dir=/
top=
undo() {
  rm -f -- "$tmp"
  if [ -n "$top" ]; then
    for a do rmdir -- "$a" 2>/dev/null || break; [ "$a" = "$top" ] && break; done
  fi
}
trap 'undo "$@"; exit 1' HUP INT TERM PIPE
fail() { undo "$@"; exit "$code"; }
if [ $# -gt 0 ]; then
  for a do [ -d "$a" ] && break; top=$a; done
  if [ -n "$top" ]; then mkdir -p -- "$1" || { code=1; fail "$@"; }; fi
fi
if [ -d "$t" ] && [ ! -L "$t" ]; then code=${EXIT.EISDIR}; fail "$@"; fi
owner=
if [ -f "$t" ] && [ ! -L "$t" ]; then
  m=$(stat -c '%a %u %g' -- "$t") || { code=1; fail "$@"; }
  mode=\${m%% *} owner=\${m#* }
fi
if [ -n "$src" ]; then
  [ "$(ident "$src")" = "$src_id" ] || { code=${EXIT.SOURCE_CHANGED}; fail "$@"; }
  (umask 077; exec dd if="$src" iflag=nofollow of="$tmp" conv=excl bs=65536 status=none) || { code=1; fail "$@"; }
else
  (umask 077; exec dd of="$tmp" conv=excl bs=65536 status=none) || { code=1; fail "$@"; }
fi
h=$(sha256sum < "$tmp") || { code=1; fail "$@"; }
if [ "\${h%% *}" != "$new_hash" ]; then
  if [ -n "$src" ]; then code=${EXIT.SOURCE_CHANGED}; else code=${EXIT.PARTIAL}; fi
  fail "$@"
fi
${pythonTail(precise)}if [ -n "$owner" ] && [ "$expect" != absent ]; then
  # What a write in place would leave: refused when not writable; the owner kept, or refused.
  [ -w "$t" ] || { printf 'readonly' >&2; code=${EXIT.DENIED}; fail "$@"; }
  if [ "$(stat -c '%u %g' -- "$tmp")" != "$owner" ]; then
    chown -- "\${owner% *}:\${owner#* }" "$tmp" 2>/dev/null || { printf 'owner %s' "$owner" >&2; code=${EXIT.DENIED}; fail "$@"; }
  fi
fi
chmod -- "$mode" "$tmp" || { code=1; fail "$@"; }
sync -- "$tmp" || { code=1; fail "$@"; }
case $expect in
absent)
  if ! err=$(ln -T -- "$tmp" "$t" 2>&1); then
    case $err in *"File exists"*) code=${EXIT.EXISTS};; *) printf '%s\\n' "$err" >&2; code=1;; esac
    fail "$@"
  fi
  rm -f -- "$tmp" ;;
cas)
  { [ -f "$t" ] && [ ! -L "$t" ]; } || { code=${EXIT.CHANGED}; fail "$@"; }
  h=$(sha256sum < "$t") || { code=${EXIT.CHANGED}; fail "$@"; }
  [ "\${h%% *}" = "$want_hash" ] || { code=${EXIT.CHANGED}; fail "$@"; }
  [ "$(ident "$t")" = "$want_id" ] || { code=${EXIT.CHANGED}; fail "$@"; }
  mv -f -T -- "$tmp" "$t" || { code=1; fail "$@"; } ;;
*)
  mv -f -T -- "$tmp" "$t" || { code=1; fail "$@"; } ;;
esac
trap - HUP INT TERM PIPE
# Committed: the directory fsync is best effort from here on, the new file is in place.
sync -- "$dir" 2>/dev/null
exec stat -c '${fmt}' -- "$t"
`;
}

/** SHA-256 of a file (not through a link at the last component). */
export const HASH_FILE = `${PRELUDE}if [ -L "$1" ]; then exit ${EXIT.ELOOP}; fi
h=$(sha256sum < "$1") || exit 1
printf '%s' "\${h%% *}"
`;

/** unlink PATH DIR [WANT_ID]: a file or link, never a directory; with WANT_ID it must still be that. */
export function unlinkScript(fmt: string): string {
	return `${PRELUDE}${identFn(fmt)}p=$1
if [ ! -e "$p" ] && [ ! -L "$p" ]; then exit ${EXIT.ENOENT}; fi
if [ -d "$p" ] && [ ! -L "$p" ]; then exit ${EXIT.EISDIR}; fi
if [ -n "$3" ]; then [ "$(ident "$p")" = "$3" ] || exit ${EXIT.CHANGED}; fi
rm -f -- "$p" || exit 1
sync -- "$2" 2>/dev/null
exit 0
`;
}

/**
 * Remove keel temp files in DIR older than MINUTES. A temp name's pid means nothing on this side
 * of the transport, so age decides: a live writer keeps its temp's mtime fresh until it commits.
 */
export const SWEEP = `${PRELUDE}[ -d "$1" ] || exit 0
exec find "$1" -mindepth 1 -maxdepth 1 -type f -name '.keel-tmp-*' -mmin "+$2" -print0 -delete
`;
