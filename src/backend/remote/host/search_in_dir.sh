cd -- "$1" && shift && exec "$@"
