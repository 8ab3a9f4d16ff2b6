# Not POSIX, but dash, bash and busybox sh have them; a limit a shell cannot set stays as it was.
# shellcheck disable=SC3045
ulimit -d @@DATA_KB@@ 2>/dev/null
ulimit -t @@CPU_SECONDS@@ 2>/dev/null
ulimit -c 0 2>/dev/null
ulimit -f 131072 2>/dev/null
# The shell exports PWD; the child's environment is exactly PATH, HOME and TMPDIR.
unset PWD OLDPWD
exec "$0" "$@"
