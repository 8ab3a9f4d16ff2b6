LC_ALL=C; export LC_ALL
exec realpath -e -z -- "$1"
