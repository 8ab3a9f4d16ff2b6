import os, sys, errno
def hasher(size):
    # The builtin module starts faster; hashlib (OpenSSL) hashes a large file faster.
    if size < (1 << 20):
        for m in ("_sha2", "_sha256"):
            try:
                return __import__(m).sha256()
            except ImportError:
                pass
    import hashlib
    return hashlib.sha256()
CHANGED, DENIED = @@EXIT_CHANGED@@, @@EXIT_DENIED@@
NOT_COPIED = ("security.capability",)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | CLOEXEC
class Bail(Exception):
    pass
def bail(code, why=None):
    raise Bail(code, why)
def show(n):
    s = os.fsencode(n).decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else "?" for c in s)
def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno))
def attrs(fd):
    try:
        names = os.listxattr(fd)
    except OSError as e:
        if e.errno in (errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", errno.ENOTSUP)):
            return []
        bail(DENIED, "attr list (%s)" % ename(e))
    out = []
    for n in sorted(names):
        try:
            out.append((n, os.getxattr(fd, n)))
        except OSError as e:
            if e.errno == errno.ENODATA:
                bail(CHANGED)
            bail(DENIED, "attr read %s (%s)" % (show(n), ename(e)))
    return out
def held(fd):
    st = os.fstat(fd)
    return (st.st_mode, st.st_uid, st.st_gid, attrs(fd))
def tm(ns):
    s, f = divmod(ns, 1000000000)
    return "%d.%09d" % (s, f) if precise == "1" else "%d" % s
def ident(st):
    return "%d %d %d %d %s %s" % (st.st_mode, st.st_size, st.st_dev, st.st_ino, tm(st.st_mtime_ns), tm(st.st_ctime_ns))
def target():
    try:
        fd = os.open(t, NOFOLLOW)
    except OSError as e:
        if expect == "cas":
            bail(CHANGED)
        if e.errno in (errno.ENOENT, errno.ELOOP):
            return None
        raise
    if (os.fstat(fd).st_mode & 0o170000) != 0o100000:
        os.close(fd)
        if expect == "cas":
            bail(CHANGED)
        return None
    if not os.access(t, os.W_OK):
        bail(DENIED, "readonly")
    return fd
def fill(src, tfd):
    kept = held(src)
    mine = os.fstat(tfd)
    if (mine.st_uid, mine.st_gid) != kept[1:3]:
        try:
            os.fchown(tfd, kept[1], kept[2])
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.EACCES):
                raise
            bail(DENIED, "owner %d %d" % kept[1:3])
    for n, v in kept[3]:
        if n in NOT_COPIED:
            continue
        if n.startswith("security."):
            try:
                if os.getxattr(tfd, n) == v:
                    continue
            except OSError:
                pass
        try:
            os.setxattr(tfd, n, v)
        except OSError as e:
            bail(DENIED, "attr set %s (%s)" % (show(n), ename(e)))
    return kept
def check(src, kept):
    h = hasher(os.fstat(src).st_size)
    while True:
        b = os.read(src, 1 << 16)
        if not b:
            break
        h.update(b)
    # How many attributes there are is up to whoever sets them: compared before the final check.
    if held(src) != kept:
        bail(CHANGED)
    st = os.fstat(src)
    if h.hexdigest() != want_hash or ident(st) != want_id:
        bail(CHANGED)
    try:
        named = os.lstat(t)
    except OSError:
        bail(CHANGED)
    if (named.st_dev, named.st_ino) != (st.st_dev, st.st_ino):
        bail(CHANGED)
def main():
    src = target()
    tfd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW | CLOEXEC)
    kept = fill(src, tfd) if src is not None else None
    # After the chown (which clears setuid/setgid) and an ACL (which sets the group bits).
    os.fchmod(tfd, int(mode, 8))
    os.fsync(tfd)
    os.close(tfd)
    if expect == "cas":
        check(src, kept)
    os.rename(tmp, t)
    try:
        d = os.open(os.path.dirname(tmp) or "/", os.O_RDONLY | CLOEXEC)
        try:
            os.fsync(d)
        finally:
            os.close(d)
    except OSError:
        pass
    st = os.lstat(t)
    sys.stdout.write("%x %d %d %d %s %s" % (st.st_mode, st.st_size, st.st_dev, st.st_ino, tm(st.st_mtime_ns), tm(st.st_ctime_ns)))
expect, t, tmp, mode, want_hash, want_id, precise = sys.argv[1:8]
try:
    main()
except Bail as b:
    if b.args[1]:
        sys.stderr.write(b.args[1])
    sys.exit(b.args[0])
except OSError as e:
    sys.stderr.write(os.strerror(e.errno) if e.errno else "error")
    sys.exit(1)
