def look_handle(p):
    # realpath by the kernel: one lookup-only handle that follows links as realpath does, named by
    # /proc/self/fd. None where that cannot be had (no O_PATH or /proc, a missing or looping path,
    # a name unlinked or changed meanwhile, one outside this root): look_walk then answers, as before.
    if PATHF is None:
        return None
    try:
        h = os.open(p, PATHF)
    except (OSError, ValueError):
        return None
    try:
        real = os.readlink("/proc/self/fd/%d" % h)
        st = os.fstat(h)
        # The name must still be the handle's: the name of a link unlinked after the open reads
        # "... (deleted)", and whatever lies there now (if anything) is another object.
        named = real.startswith("/") and same_object(os.lstat(real), st)
    except OSError:
        named = False
    if not named:
        os.close(h)
        return None
    return h, real, st

def same_object(a, b):
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)

def k_look(p, limit):
    # realpath, stat and (a regular file up to limit) the bytes with the identity of the handle
    # they were read from, in one answer: a JSON line [real, stat line, length or -1], the bytes.
    # The name, the stat and the bytes are those of one handle: the bytes are reopened through it.
    got = look_handle(p)
    if got is None:
        return look_walk(p, limit)
    h, real, st = got
    try:
        utf8_or_fail(real)
        data = None
        if S.S_ISREG(st.st_mode) and st.st_size <= int(limit):
            try:
                f = os.open("/proc/self/fd/%d" % h, os.O_RDONLY | os.O_NONBLOCK | CLOEXEC)
            except OSError:
                f = None
            if f is not None:
                try:
                    fst = os.fstat(f)
                    if same_object(fst, st) and S.S_ISREG(fst.st_mode):
                        data = read_fd(f, int(limit))
                        if data is not None:
                            st = fst
                finally:
                    os.close(f)
    finally:
        os.close(h)
    return look_answer(real, st, data)

def look_walk(p, limit):
    # k_look by name: realpath, stat (for the exact errno), then the pinned walk of k_read.
    real = os.path.realpath(p)
    utf8_or_fail(real)
    st = os.stat(real)
    data = None
    if S.S_ISREG(st.st_mode) and st.st_size <= int(limit):
        try:
            f, fst = open_regular(real)
        except (OSError, Fail, Swapped):
            f = None
        if f is not None:
            try:
                data = read_fd(f, int(limit))
            finally:
                os.close(f)
            if data is not None:
                st = fst
    return look_answer(real, st, data)

def utf8_or_fail(real):
    try:
        real.encode("utf-8")
    except UnicodeEncodeError:
        raise Fail("keel: not UTF-8")

def look_answer(real, st, data):
    head = json.dumps([real, stat_line(st), -1 if data is None else len(data)])
    return head.encode() + b"\n" + (data or b"")
