CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | CLOEXEC
RACY_NS = 50000000
GITIGNORE_MAX = 1 << 20
LEFT_OUT_SHOWN = 50
INDEX_MAX = 1 << 30
SHA = re.compile(r"^[0-9a-f]{64}$")
# A store no helper holds and untouched this long was left by a session that is gone.
STALE_S = 3600
LOCK_WAIT_S = 5

class Refused(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code

def read_bounded(fd, limit):
    # At most limit bytes from fd; None when there are more.
    parts, n = [], 0
    while True:
        b = os.read(fd, min(1 << 20, limit + 1 - n))
        if not b:
            return b"".join(parts)
        parts.append(b)
        n += len(b)
        if n > limit:
            return None

def trusted_dir(path):
    # A directory only this user (or root) can change: it and every ancestor owned by root or us,
    # none writable by others unless sticky (/tmp).
    uid = os.geteuid()
    p = path
    while True:
        st = os.lstat(p)
        if not S.S_ISDIR(st.st_mode) or st.st_uid not in (0, uid):
            return False
        if st.st_mode & 0o022 and not st.st_mode & S.S_ISVTX:
            return False
        if p == "/":
            return True
        p = os.path.dirname(p)

def inside(a, b):
    return a == b or a.startswith(b.rstrip("/") + "/")

def store_base(roots):
    # keel's state on this host, as on the local machine: ${XDG_STATE_HOME:-~/.local/state}/keel,
    # else /var/tmp/keel-state-UID; never inside a root, nor a root inside it.
    home = os.environ.get("HOME") or "/"
    xdg = os.environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state")
    why = []
    for base in (os.path.join(xdg, "keel"), "/var/tmp/keel-state-%d" % os.geteuid()):
        try:
            os.makedirs(base, 0o700, exist_ok=True)
            real = os.path.realpath(base)
            if any(inside(real, r) or inside(r, real) for r in roots):
                why.append("%s overlaps a root" % real)
                continue
            if not trusted_dir(real):
                why.append("%s can be changed by another user" % real)
                continue
            cp = os.path.join(real, "checkpoints")
            try:
                os.mkdir(cp, 0o700)
            except FileExistsError:
                pass
            st = os.lstat(cp)
            if not S.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                why.append("%s is not this user's directory" % cp)
                continue
            if st.st_mode & 0o077:
                os.chmod(cp, 0o700)
            return cp
        except OSError as e:
            why.append("%s: %s" % (base, e.strerror))
    raise Refused("STATE", "no private directory for checkpoints on this host (" + "; ".join(why) + ")")

def sweep(base, mine):
    # Remove stores no live helper holds (its lock is free) and untouched for STALE_S.
    for name in os.listdir(base):
        if name == mine or not name.startswith("session-"):
            continue
        path = os.path.join(base, name)
        try:
            fd = os.open(os.path.join(path, "lock"), os.O_RDWR | os.O_NOFOLLOW | CLOEXEC)
        except OSError:
            fd = None
        try:
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue
            if time.time() - os.lstat(path).st_mtime > STALE_S:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass
        finally:
            if fd is not None:
                os.close(fd)

class Store:
    # Blobs named by their SHA-256 in dir/blobs. What is read back is input: a blob is used only
    # when it hashes to its name; one this helper did not write itself is rewritten before it is
    # counted on.
    def __init__(self, dir):
        self.dir = dir
        self.blobs = os.path.join(dir, "blobs")
        self.sizes = {}
        self.mine = set()
        self.total = 0
        for name in os.listdir(self.blobs):
            try:
                st = os.lstat(os.path.join(self.blobs, name))
            except OSError:
                continue
            if SHA.match(name) and S.S_ISREG(st.st_mode):
                self.sizes[name] = st.st_size
                self.total += st.st_size
            else:
                self.drop_file(name)

    def drop_file(self, name):
        try:
            os.unlink(os.path.join(self.blobs, name))
        except OSError:
            pass

    def put(self, sha, data, room):
        if sha in self.mine:
            return True
        if len(data) > room:
            return False
        tmp = os.path.join(self.blobs, ".tmp-" + secrets.token_hex(6))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | CLOEXEC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.rename(tmp, os.path.join(self.blobs, sha))
        self.total += len(data) - self.sizes.get(sha, 0)
        self.sizes[sha] = len(data)
        self.mine.add(sha)
        return True

    def get(self, sha):
        size = self.sizes.get(sha) if SHA.match(sha) else None
        if size is None:
            return None
        try:
            fd = os.open(os.path.join(self.blobs, sha), FILE_FLAGS)
        except OSError:
            return None
        try:
            if not S.S_ISREG(os.fstat(fd).st_mode):
                return None
            data = read_bounded(fd, size)
        finally:
            os.close(fd)
        return data if data is not None and hashlib.sha256(data).hexdigest() == sha else None

    def retain(self, keep):
        for sha in [s for s in self.sizes if s not in keep]:
            self.total -= self.sizes.pop(sha)
            self.mine.discard(sha)
            self.drop_file(sha)

def valid_state(s):
    if not isinstance(s, dict):
        return False
    k = s.get("kind")
    if k in ("absent", "other"):
        return len(s) == 1
    if k == "link":
        return len(s) == 2 and isinstance(s.get("target"), str)
    if k == "dir":
        return len(s) == 2 and type(s.get("mode")) is int and 0 <= s["mode"] <= 0o7777
    if k == "file":
        sha = s.get("sha256")
        return (len(s) == 4 and type(s.get("mode")) is int and 0 <= s["mode"] <= 0o7777
                and type(s.get("size")) is int and s["size"] >= 0
                and (sha is None or (isinstance(sha, str) and SHA.match(sha) is not None)))
    return False

def load_index(path, roots):
    # The index a previous helper of this store left: input like any other. Anything wrong (not
    # JSON, other roots, a path outside them, a malformed entry) and it is not used: the next scan
    # is a full one.
    try:
        fd = os.open(path, FILE_FLAGS)
    except OSError:
        return None
    try:
        if not S.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = read_bounded(fd, INDEX_MAX)
    finally:
        os.close(fd)
    try:
        doc = json.loads(raw.decode("utf-8"))
        if not isinstance(doc, dict) or doc.get("v") != 1 or doc.get("roots") != roots:
            return None
        index = {}
        for row in doc["entries"]:
            p, state, identity, racy = row
            if not (isinstance(p, str) and valid_state(state) and isinstance(identity, str)
                    and type(racy) is bool and state["kind"] != "absent"):
                return None
            if ".." in p.split("/") or not any(p.startswith(r + "/") for r in roots):
                return None
            index[p] = (state, identity, racy)
        return index
    except (ValueError, KeyError, TypeError, AttributeError):
        return None

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

class Helper:
    def __init__(self, req):
        roots = req.get("roots")
        if not (isinstance(roots, list) and roots and all(isinstance(r, str) and r.startswith("/") for r in roots)):
            raise Refused("EINVAL", "roots must be absolute paths")
        self.roots = roots
        self.max_file = int(req["maxFileBytes"])
        self.max_entries = int(req["maxEntries"])
        base = store_base(roots)
        name = req.get("store")
        reused = False
        if isinstance(name, str) and re.match(r"^session-[0-9a-f]{16}$", name):
            dir = os.path.join(base, name)
            try:
                st = os.lstat(dir)
                reused = S.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077
            except OSError:
                reused = False
        if not reused:
            name = "session-" + secrets.token_hex(8)
            dir = os.path.join(base, name)
            os.mkdir(dir, 0o700)
        try:
            os.mkdir(os.path.join(dir, "blobs"), 0o700)
        except FileExistsError:
            pass
        self.lock = os.open(os.path.join(dir, "lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | CLOEXEC, 0o600)
        # After a dropped connection the old helper may take a moment to see its stdin end.
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        os.utime(dir)
        sweep(base, name)
        self.name, self.dir = name, dir
        self.store = Store(dir)
        self.index_path = os.path.join(dir, "index.json")
        self.index = load_index(self.index_path, roots) if reused else None
        self.reused = reused and self.index is not None

    def save_index(self):
        rows = [[p, e[0], e[1], e[2]] for p, e in self.index.items()]
        tmp = os.path.join(self.dir, ".tmp-index-" + secrets.token_hex(6))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | CLOEXEC, 0o600)
        try:
            data = json.dumps({"v": 1, "roots": self.roots, "entries": rows}, separators=(",", ":")).encode()
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.rename(tmp, self.index_path)

    def capture(self, req):
        scan = Scan(self, max(0, int(req["room"])))
        for root in self.roots:
            try:
                fd = os.open(root, DIR_FLAGS)
            except OSError:
                continue
            try:
                scan.walk(fd, root, [], "")
            finally:
                os.close(fd)
        before = self.index
        self.index = scan.index
        changes = changes_between(before, scan.index) if before is not None else []
        if before is None or changes or scan.dirty:
            self.save_index()
        return {"changes": changes, "leftOut": scan.left_out, "leftOutCount": scan.left_out_count,
                "identityOnly": scan.identity_only, "truncated": scan.truncated,
                "fresh": before is None}

    def retain(self, req):
        keep = set(s for s in req["keep"] if isinstance(s, str))
        for e in (self.index or {}).values():
            if e[0]["kind"] == "file" and e[0]["sha256"]:
                keep.add(e[0]["sha256"])
        self.store.retain(keep)
        return {}

    def parent_of(self, path):
        # The parent directory of path opened from its root one component at a time, never
        # following a link: a directory swapped for a link fails the step.
        if not isinstance(path, str):
            raise Refused("EINVAL", "path must be a string")
        root = max((r for r in self.roots if path.startswith(r.rstrip("/") + "/")), key=len, default=None)
        parts = path[len(root.rstrip("/")) + 1:].split("/") if root else []
        if not parts or any(p in ("", ".", "..") for p in parts):
            raise Refused("EINVAL", "%s is not a path below a root" % path)
        fd = os.open(root, DIR_FLAGS)
        try:
            for name in parts[:-1]:
                nfd = os.open(name, DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = nfd
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1]

    def step(self, req):
        op = req["op"]
        fd, name = self.parent_of(req.get("path"))
        try:
            if op == "makeDir":
                os.mkdir(name, int(req["mode"]) & 0o7777, dir_fd=fd)
            elif op == "makeLink":
                if not isinstance(req.get("target"), str):
                    raise Refused("EINVAL", "target must be a string")
                os.symlink(req["target"], name, dir_fd=fd)
            elif op == "removeDir":
                os.rmdir(name, dir_fd=fd)
            else:
                f = os.open(name, FILE_FLAGS, dir_fd=fd)
                try:
                    os.fchmod(f, int(req["mode"]) & 0o7777)
                finally:
                    os.close(f)
        finally:
            os.close(fd)
        return {}

def reply(head, data=b""):
    out = sys.stdout.buffer
    if data:
        head["size"] = len(data)
    out.write(json.dumps(head, separators=(",", ":")).encode() + b"\n")
    if data:
        out.write(data)
    out.flush()

def serve():
    # One request per line (a JSON object with "op"); each answered by one JSON line, then "size"
    # raw bytes when it says so. The first request opens the store.
    helper = None
    for line in sys.stdin.buffer:
        try:
            req = json.loads(line)
            op = req["op"]
            if op == "open":
                helper = Helper(req)
                reply({"ok": True, "store": helper.name, "dir": helper.dir, "reused": helper.reused,
                       "storeBytes": helper.store.total})
                continue
            if helper is None:
                raise Refused("EINVAL", "open first")
            if op == "capture":
                r = helper.capture(req)
            elif op == "blob":
                data = helper.store.get(req["sha256"]) if isinstance(req.get("sha256"), str) else None
                reply({"ok": True, "found": data is not None, "storeBytes": helper.store.total}, data or b"")
                continue
            elif op == "retain":
                r = helper.retain(req)
            elif op in ("makeDir", "makeLink", "setMode", "removeDir"):
                r = helper.step(req)
            elif op == "close":
                shutil.rmtree(helper.dir, ignore_errors=True)
                reply({"ok": True, "storeBytes": 0})
                return
            else:
                raise Refused("EINVAL", "unknown op %r" % op)
            r["ok"] = True
            r["storeBytes"] = helper.store.total
            reply(r)
        except Refused as e:
            reply({"ok": False, "code": e.code, "message": str(e)})
        except OSError as e:
            reply({"ok": False, "code": errno.errorcode.get(e.errno, "EIO"), "message": str(e)})
        except (ValueError, KeyError, TypeError) as e:
            reply({"ok": False, "code": "EINVAL", "message": "bad request: %s" % e})

serve()
