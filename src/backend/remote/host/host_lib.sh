# The file and process steps of every sh host: the persistent helper shell (shell_lib.sh) and the
# exec backend's one-call scripts (exec_*.sh). The caller sets k_fmt (the stat line's format) and
# k_T (-T where mv has it). Messages in the C locale: keel reads errnos from them.
LC_ALL=C; export LC_ALL
k_lstat() { stat -c "${k_fmt:?}" -- "$1"; }
k_stat() { stat -L -c "${k_fmt:?}" -- "$1"; }
# The compare-and-swap: TEMP renamed over TARGET while TARGET is still the regular file with
# sha256 HASH and stat line ID (status 3 when it is not); without HASH, renamed unchecked.
k_cas() {
  if [ -n "$3" ]; then
    { [ -f "$2" ] && [ ! -L "$2" ]; } || return 3
    k_h=$(sha256sum < "$2" 2>/dev/null) || return 3
    [ "${k_h%% *}" = "$3" ] || return 3
    k_i=$(k_lstat "$2" 2>/dev/null) || k_i=
    [ "$k_i" = "$4" ] || return 3
  fi
  # shellcheck disable=SC2086 # k_T is -T or nothing
  mv -f ${k_T?} -- "$1" "$2"
}
# Remove PATH (a file or link, never a directory), then sync DIR; with ID, only while PATH's stat
# line is ID (status 3 when it is not).
k_unlink() {
  if [ -n "$3" ]; then
    k_i=$(k_lstat "$1" 2>/dev/null) || k_i=
    [ "$k_i" = "$3" ] || return 3
  fi
  if [ -d "$1" ] && [ ! -L "$1" ]; then echo "rm: $1: Is a directory" >&2; return 1; fi
  rm -- "$1" || return 1
  sync -- "$2" 2>/dev/null
  return 0
}
# Temp files in DIR older than MINUTES, removed and named (NUL after each). A temp name's pid
# means nothing on this side of the transport, so age decides: a live writer keeps its mtime fresh.
k_sweep() {
  [ -d "$1" ] || return 0
  find "$1" -mindepth 1 -maxdepth 1 -type f -name '.keel-tmp-*' -mmin "+$2" -print0 -delete
}
# Kill the process group PGID (- for none) and its leader, then the PIDS named after it. The
# shell's kill builtin (no kill(1) needed); "-s KILL --" is what dash accepts.
k_kill() {
  if [ "$1" != - ]; then kill -s KILL -- "-$1" "$1" 2>/dev/null; fi
  shift; if [ $# -gt 0 ]; then kill -s KILL -- "$@" 2>/dev/null; fi; return 0
}
