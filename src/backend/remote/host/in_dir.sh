cd -- "$1" || exit 127; shift; exec "$@"
