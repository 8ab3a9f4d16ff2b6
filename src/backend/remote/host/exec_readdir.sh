LC_ALL=C; export LC_ALL
d=$1 want=$2
chk() { [ -z "$want" ] || [ "$(stat -L -c '%d %i' -- "$d")" = "$want" ] || exit @@EXIT_SWAPPED@@; }
if [ ! -d "$d" ]; then
  if [ -e "$d" ]; then exit @@EXIT_ENOTDIR@@; fi
  exit @@EXIT_ENOENT@@
fi
chk
find -H "$d" -mindepth 1 -maxdepth 1 -printf '%y%f\0' || exit 1
chk
