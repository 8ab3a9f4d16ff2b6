export LC_ALL=C
command -v python3 >/dev/null 2>&1 || exit 127
