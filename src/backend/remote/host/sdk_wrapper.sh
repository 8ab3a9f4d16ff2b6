m=$1; shift
[ "$m" = i ] && command -v python3 >/dev/null 2>&1 && exec python3 -S -c '@@SDK_RELAY@@' "$@"
enc() { while c=$(dd bs=65536 count=1 2>/dev/null | base64 -w0) && [ -n "$c" ]; do printf ':%s\n' "$c"; done; }
dec() { case $m in i) x=; [ "$(printf ab | { head -c 1 >/dev/null 2>&1; cat; })" = b ] && x=1
  while IFS= read -r l && [ "$l" != . ]; do case $l in "#"*) [ -z "$x" ] || head -c $((${l#?} + 1)) | base64 -d ;; *) printf %s "$l" | base64 -d ;; esac; done ;; e) printf %s "$KEEL_IN" | base64 -d ;; f) base64 -d < "$KEEL_IN_FILE" ;; esac; }
run() { case $m in -) "$@" </dev/null ;; i) feed "$@" ;; *) dec 3>&- 4>&- 5>&- | "$@" ;; esac; }
feed() { t=$(mktemp -d) && mkfifo "$t/in" || return 126; exec 6<&0
  dec <&6 >"$t/in" 6<&- 3>&- 4>&- 5>&- & d=$!
  "$@" <"$t/in" 6<&-; s=$?; kill "$d" 2>/dev/null; rm -rf -- "$t"; return "$s"; }
printf '\n'; printf '\n' >&2
exec 4>&1
rc=$( { { { run "$@" 3>&- 4>&- 5>&-; echo "$?" >&5; } 2>&1 >&3 | enc >&2; } 3>&1 | enc >&4; } 5>&1 )
[ "$m" = f ] && rm -f -- "$KEEL_IN_FILE"
printf '!%s\n' "$rc"
