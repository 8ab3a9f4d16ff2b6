export LC_ALL=C
unset BASH_ENV ENV CDPATH HISTFILE
k_fmt='%f %s %d %i %.9Y %.9Z'
stat -c '%.9Y' / 2>/dev/null | grep -q '[.]' || k_fmt='%f %s %d %i %Y %Z'
k_T=
# shellcheck disable=SC2034 # read by host_lib.sh
mv --help 2>&1 | grep -q -e --no-target-directory && k_T=-T
k_sh=$(command -v bash 2>/dev/null || command -v sh)
# Debian's bash sources ~/.bashrc in any non-interactive bash that sees SSH_CLIENT; --norc stops it.
k_shc=$k_sh
case $k_sh in *bash) k_shc="$k_sh --norc --noprofile" ;; esac
# The running job's FIFOs and the next job's (see k_run) go with the shell, however it ends: cut
# off by a dropped connection, its next write to the channel raises SIGPIPE.
k_o=
k_nx=
trap '[ -z "$k_nx" ] || rm -f -- "$k_nx" "$k_nx.e"; [ -z "$k_o" ] || rm -f -- "$k_o" "$k_o.e"' EXIT
trap 'exit 129' HUP
trap 'exit 141' PIPE
trap 'exit 143' TERM
k_q() { k_m=$1; shift; "$@" </dev/null 2>&1; printf '\037%s r %d\n' "$k_m" "$?"; }
k_caps() {
  for k_t in stat sha256sum realpath mv cat rm mkdir mkfifo setsid find grep base64; do
    command -v "$k_t" >/dev/null 2>&1 || printf 'missing %s\n' "$k_t"
  done
  grep -P x /dev/null >/dev/null 2>&1; [ $? -eq 1 ] && echo 'grep-P yes'
  printf 'fmt %s\n' "$k_fmt"
  printf 'shell %s\n' "$k_sh"
  printf 'home %s\n' "$HOME"
}
k_real() { realpath -e -- "$1"; }
k_which() { command -v "$1" || :; }
k_hash() {
  if [ -L "$1" ]; then echo "$1: Too many levels of symbolic links"; return 1; fi
  sha256sum < "$1"
}
k_prep() {
  k_made=
  if [ "$2" = 1 ] && [ ! -d "$1" ]; then
    k_d=$1
    while [ -n "$k_d" ] && [ ! -e "$k_d" ] && [ ! -L "$k_d" ]; do k_made=$k_d; k_d=${k_d%/*}; done
    mkdir -p -- "$1" || return 1
  fi
  if [ -e "$3" ] || [ -L "$3" ]; then printf 'st '; k_lstat "$3" || return 1; else echo none; fi
  if [ -n "$k_made" ]; then printf 'made %s' "$k_made"; fi
  return 0
}
k_swap() {
  k_cas "$1" "$2" "$4" "$5"
  case $? in 0) ;; 3) echo changed; return 0 ;; *) return 1 ;; esac
  echo moved
  sync -- "$3" 2>/dev/null
  printf 'st '; k_lstat "$2"
}
k_fin() { rm -f -- "$1"; sync -- "$3" 2>/dev/null; printf 'st '; k_lstat "$2"; }
k_copy() { cat -- "$1" > "$2" && sync -- "$2" 2>/dev/null; sha256sum < "$2"; }
k_rm() {
  k_unlink "$@"
  case $? in 0) echo ok ;; 3) echo changed ;; *) return 1 ;; esac
}
k_mkdirp() { mkdir -p -- "$1"; }
# Kill the group led by $1 if its leader is still the process that started at $2 (after a drop).
k_reap() {
  k_t=
  if read -r k_t < "/proc/$1/stat" 2>/dev/null; then
    k_t=${k_t##*) }; set -- "$1" "$2" $k_t
    if [ "${22}" = "$2" ]; then kill -s KILL -- "-$1" 2>/dev/null; fi
  fi
  return 0
}
k_run() {
  k_m=$1 k_mode=$2
  if ! cd -- "$3" 2>/dev/null; then
    printf '\037%s n\n' "$k_m" >&2; printf '\037%s e\n' "$k_m"; printf '\037%s d\n' "$k_m" >&2; return
  fi
  shift 3
  if [ "$k_mode" = f ] || [ "$k_mode" = g ]; then
    # keel's own argv (scripts, rg, fd): output straight to the shell's streams, no FIFO relays.
    if [ "$k_mode" = g ]; then base64 -d <&9 | setsid "$@" 9<&- & k_p=$!
    else setsid "$@" </dev/null & k_p=$!; fi
    k_t=
    if read -r k_t < "/proc/$k_p/stat" 2>/dev/null; then k_t=${k_t##*) }; set -- $k_t; k_t=${20}; fi
    printf '\037%s p %s %s\n' "$k_m" "$k_p" "${k_t:--}" >&2
    wait "$k_p" 2>/dev/null; k_c=$?
    cd /
    printf '\037%s x %s\n' "$k_m" "$k_c" >&2
    printf '\037%s e\n' "$k_m"
    printf '\037%s d\n' "$k_m" >&2
    return
  fi
  # The FIFO pair made after the previous job (off the critical path), else one made now.
  if [ -n "$k_nx" ] && [ -p "$k_nx" ] && [ -p "$k_nx.e" ]; then k_o=$k_nx
  else
    k_o="${TMPDIR:-/tmp}/.keel-$k_m"
    if ! mkfifo -m 600 "$k_o" "$k_o.e"; then
      printf '\037%s e\n' "$k_m"; printf '\037%s x 126\n' "$k_m" >&2; printf '\037%s d\n' "$k_m" >&2; cd /; return
    fi
  fi
  k_nx=
  k_e=
  cat "$k_o" & k_r=$!
  if [ "$k_mode" = c ]; then
    k_c=$1; shift
    if [ $# -gt 0 ]; then set -- env "$@"; fi
    setsid "$@" $k_shc -c "$k_c" </dev/null >"$k_o" 2>&1 & k_p=$!
  else
    cat "$k_o.e" >&2 & k_e=$!
    if [ "$k_mode" = b ]; then
      # stdin: the request's here-document on fd 9, base64 (the job is the pipeline's last process).
      base64 -d <&9 | setsid "$@" 9<&- >"$k_o" 2>"$k_o.e" & k_p=$!
    else
      setsid "$@" </dev/null >"$k_o" 2>"$k_o.e" & k_p=$!
    fi
  fi
  # The leader's start time (Linux /proc, read without a fork) tells it from a later reuse of its pid.
  k_t=
  if read -r k_t < "/proc/$k_p/stat" 2>/dev/null; then k_t=${k_t##*) }; set -- $k_t; k_t=${20}; fi
  printf '\037%s p %s %s %s %s\n' "$k_m" "$k_p" "${k_t:--}" "$k_r" "$k_e" >&2
  wait "$k_p" 2>/dev/null; k_c=$?
  printf '\037%s x %s\n' "$k_m" "$k_c" >&2
  wait "$k_r" 2>/dev/null
  if [ -n "$k_e" ]; then wait "$k_e" 2>/dev/null; fi
  cd /
  printf '\037%s e\n' "$k_m"
  printf '\037%s d\n' "$k_m" >&2
  # After the answer: remove this job's FIFOs and make fresh ones for the next job (a new inode:
  # nothing a background child of this job holds open reaches it).
  rm -f -- "$k_o" "$k_o.e"
  k_o=
  k_nx="${TMPDIR:-/tmp}/.keel-$k_m.n"
  mkfifo -m 600 "$k_nx" "$k_nx.e" 2>/dev/null || k_nx=
}
