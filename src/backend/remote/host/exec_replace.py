import sys
CHANGED, DENIED = @@EXIT_CHANGED@@, @@EXIT_DENIED@@
def main(expect, t, tmp, mode, want_hash, want_id, precise):
    # The replace for the write script of the exec backend (durable.py), by names in one directory.
    fd = os.open(os.path.dirname(tmp) or "/", os.O_RDONLY | os.O_DIRECTORY | CLOEXEC)
    name = os.path.basename(t)
    try:
        replace(fd, name, os.path.basename(tmp), want_hash if expect == "cas" else "", want_id,
                precise == "1", int(mode, 8), True)
        sys.stdout.write(stat_line(os.lstat(name, dir_fd=fd), precise == "1"))
    finally:
        os.close(fd)
try:
    main(*sys.argv[1:8])
except Changed:
    sys.exit(CHANGED)
except Refused as e:
    sys.stderr.write(e.args[0])
    sys.exit(DENIED)
except OSError as e:
    sys.stderr.write(os.strerror(e.errno) if e.errno else "error")
    sys.exit(1)
