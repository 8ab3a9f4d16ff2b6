LC_ALL=C; export LC_ALL
exec mkdir -p -- "$1"
