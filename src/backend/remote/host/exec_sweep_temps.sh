LC_ALL=C; export LC_ALL
[ -d "$1" ] || exit 0
exec find "$1" -mindepth 1 -maxdepth 1 -type f -name '.keel-tmp-*' -mmin "+$2" -print0 -delete
