LC_ALL=C; export LC_ALL
if [ -L "$1" ]; then exit @@EXIT_ELOOP@@; fi
if [ ! -e "$1" ]; then exit @@EXIT_ENOENT@@; fi
if [ -d "$1" ]; then exit @@EXIT_EISDIR@@; fi
exec <"$1" || exit 1
if [ -n "$2" ]; then
  [ "$(stat -L -c '%d %i' -)" = "$2 $3" ] || exit @@EXIT_SWAPPED@@
fi
exec cat
