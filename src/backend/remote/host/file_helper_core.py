import base64, json, sys
out = sys.stdout.buffer
# A lookup-only handle where the host has one (Linux): no read permission needed, never blocks.
DIRF = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | CLOEXEC
# A lookup-only handle that follows links, named through /proc (k_look); None without either.
PATHF = (os.O_PATH | CLOEXEC) if hasattr(os, "O_PATH") and os.path.isdir("/proc/self/fd") else None

class Fail(Exception):
    pass

class Swapped(Exception):
    pass

def walk(p):
    # Open the parent of p from / one directory at a time, never following a link. The path is
    # canonical (the guard resolved it): a link on the way was swapped in after the check.
    parts = [x for x in p.split("/") if x]
    fd = os.open("/", DIRF)
    try:
        for name in parts[:-1]:
            if name in (".", ".."):
                raise Swapped()
            try:
                nfd = os.open(name, DIRF, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR) and is_link(name, fd):
                    raise Swapped()
                raise
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd, (parts[-1] if parts else ".")

def is_link(name, fd):
    try:
        return S.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode)
    except OSError:
        return False

def lstat_at(p):
    fd, name = walk(p)
    try:
        return os.lstat(name, dir_fd=fd)
    finally:
        os.close(fd)

def open_in(fd, name, p):
    # No link in the last component, and never block on a FIFO swapped in.
    f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | CLOEXEC, dir_fd=fd)
    st = os.fstat(f)
    if not S.S_ISREG(st.st_mode):
        os.close(f)
        raise Fail("%s: %s" % (p, "Is a directory" if S.S_ISDIR(st.st_mode) else "not a regular file"))
    return f, st

def open_regular(p):
    fd, name = walk(p)
    try:
        return open_in(fd, name, p)
    finally:
        os.close(fd)

def read_fd(f, limit=None):
    # The whole file; with a limit, None once more than that many bytes are there.
    parts, n = [], 0
    while True:
        b = os.read(f, 1 << 20)
        if not b:
            return b"".join(parts)
        n += len(b)
        if limit is not None and n > limit:
            return None
        parts.append(b)

def hash_in(fd, name, p):
    f, _ = open_in(fd, name, p)
    try:
        return sha256_fd(f)
    finally:
        os.close(f)

def unlink_quiet(fd, name):
    try:
        os.unlink(name, dir_fd=fd)
    except OSError:
        pass

def st_line(fd, name):
    # After a commit: the new stat, or nothing if it is already gone (the commit still counts).
    try:
        return "st " + stat_line(os.lstat(name, dir_fd=fd)) + "\n"
    except OSError:
        return ""

def in_dir(temp, target):
    fd, name = walk(target)
    head, tname = temp.rsplit("/", 1)
    if head.rstrip("/") != target.rsplit("/", 1)[0].rstrip("/"):
        os.close(fd)
        raise Fail("%s: temp file not beside its target" % temp)
    return fd, name, tname
