import errno, os, stat as S
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Not copied to a replacement: file capabilities, which a write in place drops too.
NOT_COPIED = ("security.capability",)
TARGET = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | CLOEXEC

class Changed(Exception):
    pass

class Refused(Exception):
    # A replace keel does not do, in one line: readonly, owner UID GID, attr WHAT NAME (ERRNO).
    pass

def stat_line(st, precise=True):
    def tm(ns):
        s, f = divmod(ns, 1000000000)
        return "%d.%09d" % (s, f) if precise else "%d" % s
    return "%x %d %d %d %s %s" % (st.st_mode, st.st_size, st.st_dev, st.st_ino, tm(st.st_mtime_ns), tm(st.st_ctime_ns))

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

def sha256_fd(f):
    h = hasher(os.fstat(f).st_size)
    while True:
        b = os.read(f, 1 << 20)
        if not b:
            return h.hexdigest()
        h.update(b)

def shown(n):
    s = os.fsencode(n).decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else "?" for c in s)

def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno))

def attrs(f):
    # Every extended attribute of the open file, sorted; none where the file system has none.
    try:
        names = os.listxattr(f)
    except OSError as e:
        if e.errno in (errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", errno.ENOTSUP)):
            return []
        raise Refused("attr list (%s)" % ename(e))
    out = []
    for n in sorted(names):
        try:
            out.append((n, os.getxattr(f, n)))
        except OSError as e:
            if e.errno == errno.ENODATA:
                raise Changed()
            raise Refused("attr read %s (%s)" % (shown(n), ename(e)))
    return out

def held(f):
    st = os.fstat(f)
    return (st.st_mode, st.st_uid, st.st_gid, attrs(f))

def give(kept, tfd, owner):
    # What a write in place keeps, onto the temp file: the owner (with owner set) and attributes.
    mine = os.fstat(tfd)
    if owner and (mine.st_uid, mine.st_gid) != kept[1:3]:
        try:
            os.fchown(tfd, kept[1], kept[2])
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.EACCES):
                raise
            raise Refused("owner %d %d" % kept[1:3])
    for n, v in kept[3]:
        if n in NOT_COPIED:
            continue
        if n.startswith("security."):
            try:
                if os.getxattr(tfd, n) == v:
                    continue  # the label policy already gave the new file
            except OSError:
                pass
        try:
            os.setxattr(tfd, n, v)
        except OSError as e:
            raise Refused("attr set %s (%s)" % (shown(n), ename(e)))

def target_in(fd, name, checked, owner):
    # The regular file replaced, opened without following a link or blocking; None when there is
    # none to keep anything of (with a check, that is a change).
    try:
        f = os.open(name, TARGET, dir_fd=fd)
    except OSError as e:
        if checked:
            raise Changed()
        if e.errno in (errno.ENOENT, errno.ELOOP) or not owner:
            return None
        raise
    if not S.S_ISREG(os.fstat(f).st_mode):
        os.close(f)
        if checked:
            raise Changed()
        return None
    if owner and not os.access(name, os.W_OK, dir_fd=fd):
        os.close(f)
        raise Refused("readonly")
    return f

def unchanged(f, fd, name, kept, sha, want, precise):
    # Bytes, attributes and stat through the one handle the attributes came from, and the name
    # still leading to it. How many attributes there are is up to whoever sets them: compared
    # before the final check, never inside it.
    digest = sha256_fd(f)
    if held(f) != kept:
        return False
    st = os.fstat(f)
    if digest != sha or stat_line(st, precise) != want:
        return False
    try:
        named = os.lstat(name, dir_fd=fd)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (st.st_dev, st.st_ino)

def sync_dir(fd):
    try:
        d = os.open(".", os.O_RDONLY | os.O_DIRECTORY | CLOEXEC, dir_fd=fd)
        try:
            os.fsync(d)
        finally:
            os.close(d)
    except OSError:
        pass

def replace(fd, name, tname, sha, want, precise=True, mode=None, owner=False):
    # The durable replace of entry name by tname, both in directory fd: what the target carries
    # given to the temp file (made durable with it), then, with sha, the compare-and-swap (the
    # target must still be the file with that hash and stat line), the rename and the directory
    # fsync. Raises Changed or Refused and leaves the target alone.
    f = target_in(fd, name, bool(sha), owner)
    try:
        tfd = os.open(tname, os.O_RDONLY | os.O_NOFOLLOW | CLOEXEC, dir_fd=fd)
        try:
            kept = held(f) if f is not None else None
            if kept is not None:
                give(kept, tfd, owner)
            if mode is not None:
                # After the chown (which clears setuid/setgid) and an ACL (which sets the group bits).
                os.fchmod(tfd, mode)
            if mode is not None or (kept is not None and kept[3]):
                os.fsync(tfd)  # else the caller made it durable and nothing changed since
        finally:
            os.close(tfd)
        if sha and not unchanged(f, fd, name, kept, sha, want, precise):
            raise Changed()
    finally:
        if f is not None:
            os.close(f)
    os.rename(tname, name, src_dir_fd=fd, dst_dir_fd=fd)
    sync_dir(fd)
