/**
 * The fast file helper: one long-lived `python3` on the host (when it has one) that answers the
 * file facts and commits with system calls instead of a `stat`, `sha256sum` or `mv` process per
 * request. Each of those costs a fork and exec on the host (measured ~2.3 ms each on loopback,
 * against ~0.2 ms for the round trip itself), so a read or an edit spent most of its time starting
 * processes. Without python3 the shell helper (remote-lib.ts) does the same work.
 *
 * Requests are one JSON array per line, `[marker, fn, ...args]`; replies are the shell helper's:
 * output, then the record `\x1f<marker> r <status>\n` (framing.ts). Output texts match the shell
 * functions of the same name (stat lines, `changed`, `moved`, strerror texts), so fs.ts reads both
 * alike. What it adds over the shell: `k_read` (open without following a link, fstat that handle,
 * read it: no window between the check and the read) and `k_put` (the whole durable write of a
 * small file, compare-and-swap included, in one request).
 */
import { shq } from "../shell-quote.js";

const PY = String.raw`
import base64, hashlib, json, os, stat as S, sys
out = sys.stdout.buffer
CLOEXEC = getattr(os, "O_CLOEXEC", 0)

class Fail(Exception):
    pass

def ident(st):
    m, c = st.st_mtime_ns, st.st_ctime_ns
    return "%x %d %d %d %d.%09d %d.%09d" % (st.st_mode, st.st_size, st.st_dev, st.st_ino,
                                            m // 10**9, m % 10**9, c // 10**9, c % 10**9)

def open_regular(p):
    # No link in the last component, and never block on a FIFO swapped in.
    fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | CLOEXEC)
    st = os.fstat(fd)
    if not S.S_ISREG(st.st_mode):
        os.close(fd)
        raise Fail("%s: %s" % (p, "Is a directory" if S.S_ISDIR(st.st_mode) else "not a regular file"))
    return fd, st

def read_fd(fd):
    parts = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return b"".join(parts)
        parts.append(b)

def hash_of(p):
    fd, _ = open_regular(p)
    try:
        h = hashlib.sha256()
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                return h.hexdigest()
            h.update(b)
    finally:
        os.close(fd)

def sync_dir(d):
    try:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass

def unlink_quiet(p):
    try:
        os.unlink(p)
    except OSError:
        pass

def k_lstat(p):
    return ident(os.lstat(p)) + "\n"

def k_stat(p):
    return ident(os.stat(p)) + "\n"

def k_hash(p):
    return hash_of(p) + "  -\n"

def k_read(p):
    fd, st = open_regular(p)
    try:
        return b"st " + ident(st).encode() + b"\n" + read_fd(fd)
    finally:
        os.close(fd)

def unchanged(target, sha, want):
    try:
        if hash_of(target) != sha:
            return False
        return ident(os.lstat(target)) == want
    except (OSError, Fail):
        return False

def st_line(p):
    # After a commit: the new stat, or nothing if it is already gone (the commit still counts).
    try:
        return "st " + ident(os.lstat(p)) + "\n"
    except OSError:
        return ""

def k_swap(temp, target, d, sha, want):
    if sha and not unchanged(target, sha, want):
        return "changed\n"
    os.rename(temp, target)
    sync_dir(d)
    return "moved\n" + st_line(target)

def k_fin(temp, target, d):
    unlink_quiet(temp)
    sync_dir(d)
    return st_line(target)

def k_rm(p, d, want):
    if want:
        try:
            if ident(os.lstat(p)) != want:
                return "changed\n"
        except OSError:
            return "changed\n"
    st = os.lstat(p)
    if S.S_ISDIR(st.st_mode):
        raise Fail("rm: %s: Is a directory" % p)
    os.unlink(p)
    sync_dir(d)
    return "ok\n"

def k_put(target, temp, d, defmode, kind, sha, want, data):
    # The durable write in one request: mode from what is there, temp created exclusively,
    # written, fchmod (umask), fsync, then link (create) or compare-and-swap (replace).
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    if st is not None and S.S_ISDIR(st.st_mode):
        raise Fail("%s: Is a directory" % target)
    mode = S.S_IMODE(st.st_mode) if st is not None and S.S_ISREG(st.st_mode) else int(defmode, 8)
    body = base64.b64decode(data)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | CLOEXEC, mode)
    try:
        try:
            view = memoryview(body)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if kind == "stage":
            return "staged\n"
        if kind == "link":
            try:
                os.link(temp, target)
            except FileExistsError:
                unlink_quiet(temp)
                return "exists\n"
            return "linked\n" + k_fin(temp, target, d)
        r = k_swap(temp, target, d, sha, want)
        if r == "changed\n":
            unlink_quiet(temp)
        return r
    except BaseException:
        unlink_quiet(temp)
        raise

FUNCS = {f.__name__: f for f in (k_lstat, k_stat, k_hash, k_read, k_swap, k_fin, k_rm, k_put)}

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
        except Fail as e:
            status, body = 1, "%s\n" % e
        except OSError as e:
            status, body = 1, "%s: %s\n" % (e.filename or "", e.strerror)
        except Exception as e:
            status, body = 1, "keel helper: %s\n" % type(e).__name__
        if isinstance(body, str):
            body = body.encode("utf-8", "surrogateescape")
        out.write(body)
        out.write(("\x1f%s r %d\n" % (marker, status)).encode())
        out.flush()

main()
`;

/** The functions the fast helper answers (all else goes to the shell helper). */
export const PY_FUNCS = new Set([
	"k_lstat",
	"k_stat",
	"k_hash",
	"k_read",
	"k_swap",
	"k_fin",
	"k_rm",
	"k_put",
]);

/** Sent to a fresh START_SHELL channel: become the helper, or exit 127 when there is no python3. */
export function pyInit(path?: string): string {
	const setPath = path === undefined ? "" : `export PATH=${shq(path)}\n`;
	return `${setPath}export LC_ALL=C\ncommand -v python3 >/dev/null 2>&1 || exit 127\nexec python3 -I -S -u -c ${shq(PY)}\n`;
}

/** A request line for the fast helper. */
export function pyRequest(marker: string, fn: string, args: string[]): string {
	return `${JSON.stringify([marker, fn, ...args])}\n`;
}
