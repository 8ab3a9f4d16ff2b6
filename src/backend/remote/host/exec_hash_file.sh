LC_ALL=C; export LC_ALL
if [ -L "$1" ]; then exit @@EXIT_ELOOP@@; fi
h=$(sha256sum < "$1") || exit 1
printf '%s' "${h%% *}"
