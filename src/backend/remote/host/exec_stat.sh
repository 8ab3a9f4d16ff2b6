LC_ALL=C; export LC_ALL
exec stat -L -c '@@FMT@@' -- "$1"
