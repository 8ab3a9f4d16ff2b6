def differs(b, a):
    # Files kept by identity only compare by identity; everything else by state.
    bs, as_ = b[0], a[0]
    if bs["kind"] == "file" and as_["kind"] == "file" and (bs["sha256"] is None or as_["sha256"] is None):
        return b[1] != a[1] or bs["mode"] != as_["mode"]
    if bs["kind"] == "file" and as_["kind"] == "file":
        return bs["mode"] != as_["mode"] or bs["sha256"] != as_["sha256"]
    return bs != as_

def changes_between(before, after):
    out = []
    for p, b in before.items():
        a = after.get(p)
        if a is None:
            out.append([p, b[0], {"kind": "absent"}])
        elif differs(b, a):
            out.append([p, b[0], a[0]])
    for p, a in after.items():
        if p not in before:
            out.append([p, {"kind": "absent"}, a[0]])
    out.sort(key=lambda c: c[0])
    return out

def read_gitignore(dfd):
    try:
        fd = os.open(".gitignore", FILE_FLAGS, dir_fd=dfd)
    except OSError:
        return None
    try:
        if not S.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = read_bounded(fd, GITIGNORE_MAX)
    finally:
        os.close(fd)
    return None if data is None else data.decode("utf-8", "replace")

class Scan:
    # One scan of the roots (the local scan's rules): never following a link, each directory and
    # file opened from its parent's descriptor with O_NOFOLLOW, a file's bytes kept only when the
    # opened file is the one listed; a file whose stat identity is what the previous scan saw is
    # not read again unless it was racy (changed within RACY_NS of that scan).
    def __init__(self, helper, room):
        self.h = helper
        self.room = room
        self.start = time.time_ns()
        self.index = {}
        self.left_out, self.left_out_count = [], 0
        self.identity_only = []
        self.truncated = False
        # A file entry differs from the previous scan's (the index on disk is rewritten).
        self.dirty = False

    def leave_out(self, path):
        self.left_out_count += 1
        if len(self.left_out) < LEFT_OUT_SHOWN:
            self.left_out.append(path)

    def file_state(self, dfd, name, path, st):
        identity = "%d:%d:%d:%d:%d:%d" % (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                                          st.st_ctime_ns, st.st_mode)
        racy = st.st_mtime_ns >= self.start - RACY_NS or st.st_ctime_ns >= self.start - RACY_NS
        mode = S.S_IMODE(st.st_mode)
        prev = self.h.index.get(path) if self.h.index is not None else None
        if prev is not None and not prev[2] and prev[1] == identity:
            if racy:
                self.dirty = True
            return (prev[0], identity, racy) if racy else prev
        self.dirty = True
        limit = self.h.max_file
        if st.st_size > limit:
            self.identity_only.append(path)
            return ({"kind": "file", "mode": mode, "size": st.st_size, "sha256": None}, identity, racy)
        try:
            fd = os.open(name, FILE_FLAGS, dir_fd=dfd)
        except OSError:
            return None  # Gone or swapped since the listing: the next scan sees what is there.
        try:
            opened = os.fstat(fd)
            if not S.S_ISREG(opened.st_mode) or opened.st_ino != st.st_ino or opened.st_dev != st.st_dev:
                return None
            data = read_bounded(fd, limit)
            if data is None:
                self.identity_only.append(path)
                return ({"kind": "file", "mode": mode, "size": st.st_size, "sha256": None}, identity, True)
            sha = hashlib.sha256(data).hexdigest()
            if not self.h.store.put(sha, data, self.room):
                self.identity_only.append(path)
                return ({"kind": "file", "mode": mode, "size": len(data), "sha256": None}, identity, True)
            self.room -= len(data)
            after = os.fstat(fd)
            moved = (after.st_mtime_ns != st.st_mtime_ns or after.st_ctime_ns != st.st_ctime_ns
                     or after.st_size != st.st_size)
            return ({"kind": "file", "mode": mode, "size": len(data), "sha256": sha}, identity, racy or moved)
        finally:
            os.close(fd)

    def walk(self, dfd, dpath, chain, rel):
        try:
            entries = list(os.scandir(dfd))
        except OSError:
            return
        names = [e.name for e in entries]
        if ".gitignore" in names:
            text = read_gitignore(dfd)
            if text is not None:
                chain = chain + [(rel, ignore_rules(text))]
        for e in entries:
            if len(self.index) >= self.h.max_entries:
                self.truncated = True
                return
            name = e.name
            path = dpath + "/" + name
            try:
                path.encode("utf-8")
            except UnicodeEncodeError:
                self.leave_out(os.fsencode(path).decode("utf-8", "replace"))
                continue
            try:
                st = os.lstat(name, dir_fd=dfd)
            except OSError:
                continue
            is_dir = S.S_ISDIR(st.st_mode)
            sub = name if rel == "" else rel + "/" + name
            if (is_dir and name in ALWAYS_LEFT_OUT) or (chain and left_out(chain, sub, name, is_dir)):
                self.leave_out(path)
                continue
            if is_dir:
                try:
                    fd = os.open(name, DIR_FLAGS, dir_fd=dfd)
                except OSError:
                    continue
                try:
                    opened = os.fstat(fd)
                    if opened.st_ino != st.st_ino or opened.st_dev != st.st_dev:
                        continue
                    self.index[path] = ({"kind": "dir", "mode": S.S_IMODE(st.st_mode)}, "", False)
                    self.walk(fd, path, chain, sub)
                finally:
                    os.close(fd)
            elif S.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink(name, dir_fd=dfd)
                    target.encode("utf-8")
                except OSError:
                    continue
                except UnicodeEncodeError:
                    self.leave_out(path)
                    continue
                self.index[path] = ({"kind": "link", "target": target}, "", False)
            elif S.S_ISREG(st.st_mode):
                entry = self.file_state(dfd, name, path, st)
                if entry is not None:
                    self.index[path] = entry
            else:
                self.index[path] = ({"kind": "other"}, "", False)
