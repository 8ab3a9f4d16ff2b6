LC_ALL=C; export LC_ALL
exec stat -c '@@FMT@@' -- "$1"
