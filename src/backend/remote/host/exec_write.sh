# shellcheck disable=SC2034 # read by host_lib.sh
k_fmt='@@FMT@@' k_T=-T
t=$1 tmp=$2 mode=$3 expect=$4 want_hash=$5 want_id=$6 new_hash=$7 src=$8 src_id=$9 py=${10}
shift 10
dir=${tmp%/*}; [ -n "$dir" ] || dir=/
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
if [ -d "$t" ] && [ ! -L "$t" ]; then code=@@EXIT_EISDIR@@; fail "$@"; fi
owner=
if [ -f "$t" ] && [ ! -L "$t" ]; then
  m=$(stat -c '%a %u %g' -- "$t") || { code=1; fail "$@"; }
  mode=${m%% *} owner=${m#* }
fi
if [ -n "$src" ]; then
  [ "$(k_lstat "$src")" = "$src_id" ] || { code=@@EXIT_SOURCE_CHANGED@@; fail "$@"; }
  (umask 077; exec dd if="$src" iflag=nofollow of="$tmp" conv=excl bs=65536 status=none) || { code=1; fail "$@"; }
else
  (umask 077; exec dd of="$tmp" conv=excl bs=65536 status=none) || { code=1; fail "$@"; }
fi
h=$(sha256sum < "$tmp") || { code=1; fail "$@"; }
if [ "${h%% *}" != "$new_hash" ]; then
  if [ -n "$src" ]; then code=@@EXIT_SOURCE_CHANGED@@; else code=@@EXIT_PARTIAL@@; fi
  fail "$@"
fi
if [ -n "$py" ] && [ "$expect" != absent ] && [ -f "$t" ] && [ ! -L "$t" ]; then
  "$py" -I -S -c '@@REPLACE_PY@@' "$expect" "$t" "$tmp" "$mode" "$want_hash" "$want_id" @@PRECISE@@
  code=$?
  [ "$code" = 0 ] || { [ "$code" = @@EXIT_CHANGED@@ ] || [ "$code" = @@EXIT_DENIED@@ ] || code=1; fail "$@"; }
  exit 0
fi
if [ -n "$owner" ] && [ "$expect" != absent ]; then
  # What a write in place would leave: refused when not writable; the owner kept, or refused.
  [ -w "$t" ] || { printf 'readonly' >&2; code=@@EXIT_DENIED@@; fail "$@"; }
  if [ "$(stat -c '%u %g' -- "$tmp")" != "$owner" ]; then
    chown -- "${owner% *}:${owner#* }" "$tmp" 2>/dev/null || { printf 'owner %s' "$owner" >&2; code=@@EXIT_DENIED@@; fail "$@"; }
  fi
fi
chmod -- "$mode" "$tmp" || { code=1; fail "$@"; }
sync -- "$tmp" || { code=1; fail "$@"; }
case $expect in
absent)
  if ! err=$(ln -T -- "$tmp" "$t" 2>&1); then
    case $err in *"File exists"*) code=@@EXIT_EXISTS@@;; *) printf '%s\n' "$err" >&2; code=1;; esac
    fail "$@"
  fi
  rm -f -- "$tmp" ;;
*)
  [ "$expect" = cas ] || want_hash=
  k_cas "$tmp" "$t" "$want_hash" "$want_id"
  code=$?
  if [ "$code" != 0 ]; then
    [ "$code" = 3 ] && code=@@EXIT_CHANGED@@ || code=1
    fail "$@"
  fi ;;
esac
trap - HUP INT TERM PIPE
# Committed: the directory fsync is best effort from here on, the new file is in place.
sync -- "$dir" 2>/dev/null
exec stat -c "$k_fmt" -- "$t"
