LC_ALL=C; export LC_ALL
if [ ! -L "$1" ]; then
  if [ -e "$1" ]; then exit @@EXIT_EINVAL@@; fi
  exit @@EXIT_ENOENT@@
fi
exec readlink -z -- "$1"
