/**
 * The command server that lives inside one long-lived sandbox (server.ts starts it). Python, given
 * inline on the command line (`python3 -I -S -c`), so there is no file inside the sandbox that a
 * command could replace, and nothing is imported from the roots, the environment or a site dir.
 *
 * It is PID 1 of the sandbox's PID namespace (bwrap --as-pid-1): the kernel drops every signal sent
 * to a namespace's init from inside it unless init handles that signal, and this one handles none
 * (SIGKILL and SIGSTOP included), so a command cannot kill, stop or interrupt it. It makes itself
 * non-dumpable first, so a command (same uid, no capabilities) cannot ptrace it, read or write its
 * memory, or open its descriptors through /proc/1/fd. Its control channel is its stdin and stdout;
 * a command is started with fresh pipes and every other descriptor closed.
 *
 * Protocol: one JSON object per line each way. In: {"run": id, "argv", "cwd", "env"} and
 * {"kill": id}. Out: {"ready": 1}, {"i": id, "o"|"e": base64}, {"i": id, "exit": code|null,
 * "sig": n|null, "clean": bool}, {"i": id, "started": 1}, {"tainted": why}. One command at a time. When a command's leader
 * exits (or it is killed), every other process in the namespace is SIGKILLed, /tmp and /dev/shm
 * are emptied, and the server checks nobody changed what its next children would inherit (rlimits,
 * nice value, CPU affinity, scheduling policy): if anything did, it says so and exits, and the host
 * starts a new sandbox.
 */
export const SERVER_CODE = String.raw`
import os, sys, json, binascii, select, signal, ctypes, resource, time
if os.getpid() != 1:  # only as the init of the sandbox's own PID namespace: its sweep kills all else
    os.write(1, b'{"fatal":"not pid 1"}\n'); os._exit(2)
try: own_proc = os.readlink('/proc/self') == '1'  # /proc is this namespace's, not the host's
except OSError: own_proc = False
if not own_proc:
    os.write(1, b'{"fatal":"not its own /proc"}\n'); os._exit(2)
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(4, 0, 0, 0, 0) != 0 or libc.prctl(3, 0, 0, 0, 0) != 0:
    os.write(1, b'{"fatal":"prctl"}\n'); os._exit(2)
for s in range(1, signal.NSIG):
    try: signal.signal(s, signal.SIG_DFL)
    except (OSError, ValueError): pass
WAKE_R, WAKE_W = os.pipe()
os.set_blocking(WAKE_W, False); os.set_blocking(WAKE_R, False)
signal.set_wakeup_fd(WAKE_W)
signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake select: a child ended
EMPTIED = sys.argv[1:]  # /tmp and /dev/shm, unless a root is there
CIN, COUT = 0, 1
NULL = os.open('/dev/null', os.O_RDWR)
LIMITS = [getattr(resource, n) for n in dir(resource) if n.startswith('RLIMIT_')]
def inherited():
    return ([resource.getrlimit(r) for r in LIMITS], os.getpriority(os.PRIO_PROCESS, 0),
            sorted(os.sched_getaffinity(0)), os.sched_getscheduler(0))
BASE = inherited()
def send(obj):
    data = (json.dumps(obj, separators=(',', ':')) + '\n').encode()
    while data:
        n = os.write(COUT, data); data = data[n:]
def b64(b): return binascii.b2a_base64(b, newline=False).decode()
def reap():
    out = {}
    while True:
        try: pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError: return out
        if pid == 0: return out
        out[pid] = st
def others():
    live = []
    for e in os.listdir('/proc'):
        if not e.isdigit() or e == '1' or int(e) == os.getpid(): continue
        try:
            with open('/proc/' + e + '/stat', 'rb') as f: st = f.read()
        except OSError: continue
        if st[st.rindex(b')') + 2:st.rindex(b')') + 3] not in (b'Z', b'X'): live.append(int(e))
    return live
def sweep(statuses):
    for _ in range(4000):
        live = others()
        for p in live:
            try: os.kill(p, 9)
            except OSError: pass
        statuses.update(reap())
        if not live: return True
        time.sleep(0.0005)
    return False
def empty(top):
    try: dev = os.lstat(top).st_dev
    except OSError: return True
    ok = True
    def rm(path):
        nonlocal ok
        try:
            st = os.lstat(path)
            if st.st_dev != dev: return False  # a bind (a root under /tmp): never entered
            if (st.st_mode & 0o170000) == 0o040000:
                os.chmod(path, 0o700)
                gone = True
                for name in os.listdir(path):
                    if not rm(path + '/' + name): gone = False
                if gone: os.rmdir(path)
                return gone
            os.unlink(path)
            return True
        except OSError:
            ok = False
            return False
    for name in os.listdir(top): rm(top + '/' + name)
    return ok
def start(req, outw, errw):
    pid = os.fork()
    if pid: return pid
    try:
        os.setsid()
        os.dup2(NULL, 0); os.dup2(outw, 1); os.dup2(errw, 2)
        signal.set_wakeup_fd(-1)
        os.closerange(3, 65536)
        for sg in range(1, signal.NSIG):
            try: signal.signal(sg, signal.SIG_DFL)
            except (OSError, ValueError): pass
        try: os.chdir(req['cwd'])
        except OSError as e:
            os.write(2, ('keel: cannot enter ' + req['cwd'] + ': ' + e.strerror + '\n').encode()); os._exit(1)
        argv = req['argv']
        os.execvpe(argv[0], argv, req['env'])  # PATH from the command's own environment
    except BaseException as e:
        try: os.write(2, ('keel: cannot run ' + str(req.get('argv', [''])[0]) + ': ' + str(e) + '\n').encode())
        finally: os._exit(127)
def run(req, buf):
    cid = req['run']
    if inherited() != BASE:
        send({'tainted': 'inherited'}); os._exit(3)
    outr, outw = os.pipe(); errr, errw = os.pipe()
    leader = start(req, outw, errw)
    os.close(outw); os.close(errw)
    send({'i': cid, 'started': 1})
    pipes = {outr: 'o', errr: 'e'}
    statuses = {}
    status = None
    killed = False
    while status is None or pipes:
        fds = list(pipes) + [WAKE_R] + ([CIN] if not killed else [])
        r = select.select(fds, [], [], 1.0 if status is None else 0.25)[0]
        if WAKE_R in r:
            try: os.read(WAKE_R, 512)
            except BlockingIOError: pass
        if CIN in r:
            chunk = os.read(CIN, 65536)
            if not chunk: os._exit(0)
            buf += chunk
            while b'\n' in buf:
                line, buf = buf.split(b'\n', 1)
                msg = json.loads(line)
                if msg.get('kill') == cid:
                    killed = True
                    try: os.killpg(leader, 9)
                    except OSError: pass
        for fd in r:
            if fd == CIN or fd == WAKE_R: continue
            data = os.read(fd, 65536)
            if data: send({'i': cid, pipes[fd]: b64(data)})
            else: os.close(fd); del pipes[fd]
        statuses.update(reap())
        if status is None and leader in statuses:
            status = statuses[leader]
            sweep(statuses)  # the leader is gone: so is everything else
        if status is not None and not r and pipes:  # swept, yet a pipe stays open: stop waiting
            for fd in pipes: os.close(fd)
            pipes = {}
    clean = sweep(statuses)
    for d in EMPTIED: clean = empty(d) and clean
    clean = clean and inherited() == BASE  # a command changed what the next would inherit: retire
    code = os.waitstatus_to_exitcode(status)
    send({'i': cid, 'exit': code if code >= 0 else None, 'sig': -code if code < 0 else None, 'clean': clean})
    if not clean: os._exit(3)
    return buf
send({'ready': 1})
buf = b''
while True:
    while b'\n' not in buf:
        chunk = os.read(CIN, 65536)
        if not chunk: os._exit(0)
        buf += chunk
    line, buf = buf.split(b'\n', 1)
    msg = json.loads(line)
    if 'run' in msg: buf = run(msg, buf)
`;
