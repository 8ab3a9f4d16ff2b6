src=$1; shift
feed() { case $src in -) : ;; env) printf %s "$KEEL_IN" | base64 -d ;; *) base64 -d < "$src" ;; esac; }
exec 3>&1
rc=$({ { feed | "$@" 3>&- 4>&-; echo $? >&4; } | base64 -w0 >&3 3>&-; } 4>&1)
case $src in -|env) ;; *) rm -f -- "$src" ;; esac
exit "$rc"
