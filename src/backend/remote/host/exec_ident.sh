LC_ALL=C; export LC_ALL
ident() { s=$(stat -c '@@FMT@@' -- "$1") || return 1; set -- $s; printf '%d %s %s %s %s %s' "$((0x$1))" "$2" "$3" "$4" "$5" "$6"; }
