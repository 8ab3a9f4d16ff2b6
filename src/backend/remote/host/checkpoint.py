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
