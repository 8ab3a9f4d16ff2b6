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
