d=$1 sh=$2 cmd=$3
shift 3
cd -- "$d" || exit 1
for kv do export "$kv" || exit 1; done
inner='printf "%s\n" "$$"; exec "$0" -c "$1"'
if command -v setsid >/dev/null 2>&1; then
  setsid "$sh" -c "$inner" "$sh" "$cmd" &
else
  "$sh" -c "$inner" "$sh" "$cmd" &
fi
p=$!
wait "$p"
r=$?
kill -s KILL -- "-$p" 2>/dev/null
exit "$r"
