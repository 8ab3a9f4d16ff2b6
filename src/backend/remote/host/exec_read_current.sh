[ -f "$1" ] || exit @@EXIT_SWAPPED@@
exec <"$1" || exit 1
s=$(stat -L -c '@@FMT@@' -) || exit 1
set -- "$1" "$2" $s
[ $((0x$3 & 61440)) -eq 32768 ] || exit @@EXIT_SWAPPED@@
[ ! -L "$1" ] && [ "$(stat -c '%d %i' -- "$1")" = "$5 $6" ] || exit @@EXIT_SWAPPED@@
if [ -n "$2" ] && [ "$4" -gt "$2" ]; then printf 'big %s\n' "$s"; exit 0; fi
printf 'st %s\n' "$s"
if [ -z "$2" ]; then exec cat; fi
exec head -c "$4"
