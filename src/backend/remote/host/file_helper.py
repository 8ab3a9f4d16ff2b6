def k_lstat(p):
    return stat_line(lstat_at(p)) + "\n"

def k_stat(p):
    # Follows a link in the last component only (stat -L); the directories on the way are pinned.
    fd, name = walk(p)
    try:
        return stat_line(os.stat(name, dir_fd=fd)) + "\n"
    finally:
        os.close(fd)

def k_hash(p):
    fd, name = walk(p)
    try:
        return hash_in(fd, name, p) + "  -\n"
    finally:
        os.close(fd)

def k_read(p):
    f, st = open_regular(p)
    try:
        return b"st " + stat_line(st).encode() + b"\n" + read_fd(f)
    finally:
        os.close(f)

def k_readc(p, limit):
    # The file as opened (FileOps.readCurrent): the handle's stat, then its bytes. With a limit:
    # none when it is larger ("big"), else exactly the size it had at the open ("short": it was
    # truncated meanwhile; what is appended meanwhile is not read).
    f, st = open_regular(p)
    try:
        head = stat_line(st).encode()
        if limit == "":
            return b"st " + head + b"\n" + read_fd(f)
        size = st.st_size
        if size > int(limit):
            return b"big " + head + b"\n"
        parts, n = [], 0
        while n < size:
            b = os.read(f, min(1 << 20, size - n))
            if not b:
                return b"short\n"
            parts.append(b)
            n += len(b)
        return b"st " + head + b"\n" + b"".join(parts)
    finally:
        os.close(f)

def swap_at(fd, name, tname, sha, want):
    # The replace with the target's attributes and, with sha, the compare-and-swap (durable.py).
    try:
        replace(fd, name, tname, sha, want)
    except Changed:
        return "changed\n"
    except Refused as e:
        return "attrs %s\n" % str(e).replace("attr set ", "", 1)
    return "moved\n" + st_line(fd, name)

def k_swap(temp, target, d, sha, want):
    fd, name, tname = in_dir(temp, target)
    try:
        return swap_at(fd, name, tname, sha, want)
    finally:
        os.close(fd)

def k_fin(temp, target, d):
    fd, name, tname = in_dir(temp, target)
    try:
        unlink_quiet(fd, tname)
        sync_dir(fd)
        return st_line(fd, name)
    finally:
        os.close(fd)

def k_rm(p, d, want):
    fd, name = walk(p)
    try:
        try:
            st = os.lstat(name, dir_fd=fd)
        except OSError:
            if want:
                return "changed\n"
            raise
        if want and stat_line(st) != want:
            return "changed\n"
        if S.S_ISDIR(st.st_mode):
            raise Fail("rm: %s: Is a directory" % p)
        os.unlink(name, dir_fd=fd)
        sync_dir(fd)
        return "ok\n"
    finally:
        os.close(fd)

def k_put(target, temp, d, defmode, kind, sha, want, data):
    # The durable write in one request: mode from what is there, temp created exclusively,
    # written, fchmod (umask), fsync, then link (create) or compare-and-swap (replace). Every
    # step is relative to the pinned directory; a failure removes the temp file.
    fd, name, tname = in_dir(temp, target)
    try:
        try:
            st = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            st = None
        if st is not None and S.S_ISDIR(st.st_mode):
            raise Fail("%s: Is a directory" % target)
        regular = st is not None and S.S_ISREG(st.st_mode)
        mode = S.S_IMODE(st.st_mode) if regular else int(defmode, 8)
        body = base64.b64decode(data)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | CLOEXEC
        f = os.open(tname, flags, mode, dir_fd=fd)
        try:
            try:
                view = memoryview(body)
                while view:
                    view = view[os.write(f, view):]
                os.fchmod(f, mode)
                os.fsync(f)
            finally:
                os.close(f)
            if kind == "link":
                try:
                    os.link(tname, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
                except FileExistsError:
                    unlink_quiet(fd, tname)
                    return "exists\n"
                unlink_quiet(fd, tname)
                sync_dir(fd)
                return "linked\n" + st_line(fd, name)
            r = swap_at(fd, name, tname, sha, want)
            if r == "changed\n" or r.startswith("attrs "):
                unlink_quiet(fd, tname)
            return r
        except BaseException:
            unlink_quiet(fd, tname)
            raise
    finally:
        os.close(fd)

FUNCS = {f.__name__: f for f in (k_lstat, k_stat, k_hash, k_read, k_readc, k_look, k_swap, k_fin, k_rm, k_put)}

def main():
    for line in sys.stdin.buffer:
        try:
            req = json.loads(line.decode("utf-8", "surrogateescape"))
            marker, fn, args = str(req[0]), req[1], req[2:]
        except Exception:
            continue
        status = 0
        try:
            body = FUNCS[fn](*args)
        except Swapped:
            status, body = 1, "swapped\n"
        except Fail as e:
            status, body = 1, "%s\n" % e
        except OSError as e:
            status, body = 1, "%s: %s\n" % (e.filename or "", e.strerror)
        except Exception as e:
            status, body = 1, "keel helper: %s\n" % type(e).__name__
        if isinstance(body, str):
            body = body.encode("utf-8", "surrogateescape")
        # One write for the answer and its record: sshd then sends it as one packet, not two.
        view = memoryview(body + ("\x1f%s r %d\n" % (marker, status)).encode())
        while view:
            view = view[out.write(view):]

main()
