import os, sys, json, binascii, select, signal, ctypes, resource, time, fcntl, struct, termios
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
try: os.posix_spawn('/nonexistent/keel', ['keel'], {}, setsid=True)  # a spawn with setsid is possible here
except OSError: pass
except Exception:  # no posix_spawn, or no setsid for it: the host runs one bwrap per command instead
    os.write(1, b'{"fatal":"posix_spawn"}\n'); os._exit(2)
WAKE_R, WAKE_W = os.pipe()
os.set_blocking(WAKE_W, False); os.set_blocking(WAKE_R, False)
signal.set_wakeup_fd(WAKE_W)
signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake select: a child ended
EMPTIED = sys.argv[1:]  # /tmp and /dev/shm, unless a root is there
CIN, COUT = 0, 1
for fd in os.listdir('/proc/self/fd'):  # anything bwrap left open stays out of the commands
    try:
        if int(fd) > 2: os.set_inheritable(int(fd), False)
    except OSError: pass
NULL = os.open('/dev/null', os.O_RDWR)  # like every descriptor Python opens: close-on-exec
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
# Every signal back to its default in the child (the server's own are already; this is belt and braces).
DEFAULTED = [s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)]
SIGNALS = set(int(s) for s in signal.valid_signals())  # what a signal request may name
def start(req, acts):
    # posix_spawn (vfork and exec in glibc): no copy of this process's memory, no Python in the
    # child. The directory is entered here (single-threaded, so nothing else sees it) and left.
    try: os.chdir(req['cwd'])
    except OSError as e: return None, 'keel: cannot enter ' + str(req['cwd']) + ': ' + e.strerror + '\n', 1
    try:
        argv = req['argv']
        name = argv[0]
        # Looked up on the PATH of the command's own environment, as execvpe does.
        paths = [name] if '/' in name else [os.path.join(d, name) for d in os.get_exec_path(req['env'])]
        first = last = None
        for path in paths:
            try: return os.posix_spawn(path, argv, req['env'], file_actions=acts, setsid=True, setsigdef=DEFAULTED), None, 0
            except (FileNotFoundError, NotADirectoryError) as e: last = e
            except OSError as e: last = e; first = first or e
        raise first or last or FileNotFoundError('no such file')
    except Exception as e:
        return None, 'keel: cannot run ' + str(req.get('argv', [''])[0]) + ': ' + str(e) + '\n', 127
    finally: os.chdir('/')
def window(fd, size):
    try: cols, rows = (int(n) for n in size)
    except (TypeError, ValueError): return
    if 0 < cols < 65536 and 0 < rows < 65536:  # otherwise the terminal's default
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
def terminal(size):
    # A pseudo-terminal of this sandbox's own devpts (bwrap --dev): nothing of the host's. Both
    # ends are close-on-exec here; the child opens the far end by name after its setsid (glibc's
    # posix_spawn runs setsid before the file actions), which makes it its controlling terminal.
    master, slave = os.openpty()
    window(master, size)
    os.set_blocking(master, False)
    return master, slave, [(os.POSIX_SPAWN_OPEN, 0, os.ttyname(slave), os.O_RDWR, 0),
                           (os.POSIX_SPAWN_DUP2, 0, 1), (os.POSIX_SPAWN_DUP2, 0, 2)]
def cleanup(statuses):
    clean = sweep(statuses)
    for d in EMPTIED: clean = empty(d) and clean
    return clean and inherited() == BASE  # a command changed what the next would inherit: retire
def run(req, buf):
    cid = req['run']
    tty = req.get('tty')
    if tty:
        master, slave, acts = terminal(tty)
        leader, failure, code = start(req, acts)
        os.close(slave)  # the child has its own: the terminal hangs up once the child's are gone
        pipes = {master: 'o'}
    else:
        master = None
        outr, outw = os.pipe(); errr, errw = os.pipe()
        leader, failure, code = start(req, [(os.POSIX_SPAWN_DUP2, NULL, 0), (os.POSIX_SPAWN_DUP2, outw, 1), (os.POSIX_SPAWN_DUP2, errw, 2)])
        os.close(outw); os.close(errw)
        pipes = {outr: 'o', errr: 'e'}
    send({'i': cid, 'started': 1})
    if leader is None:  # nothing was started: say why, as the command's stderr
        for fd in pipes: os.close(fd)
        send({'i': cid, 'e': b64(failure.encode())})
        send({'i': cid, 'exit': code, 'sig': None, 'clean': True})
        return buf
    statuses = {}
    status = None
    killed = False
    swept = True
    typed = bytearray()  # for the terminal, not yet taken by it
    quiet = 0  # selects in a row that found nothing to read
    while status is None or pipes:
        # Lines read so far, those that came with the request too (a kill sent while the last
        # cleanup ran): a kill for this command kills its group; input goes to its terminal; a
        # signal goes to its group. The next request waits for this one's reply.
        while b'\n' in buf and not killed:
            line, rest = buf.split(b'\n', 1)
            msg = json.loads(line)
            if 'run' in msg: break
            buf = rest
            if msg.get('kill') == cid:
                killed = True
                typed = bytearray()
                try: os.killpg(leader, 9)
                except OSError: pass
            elif status is not None: continue
            elif msg.get('in') == cid and master in pipes:
                typed += binascii.a2b_base64(msg.get('d', ''))
            elif msg.get('signal') == cid and type(msg.get('n')) is int and msg['n'] in SIGNALS:
                try: os.killpg(leader, msg['n'])
                except OSError: pass
        fds = list(pipes) + [WAKE_R] + ([CIN] if not killed else [])
        typing = [master] if typed and master in pipes else []
        r, w, _ = select.select(fds, typing, [], 1.0 if status is None else 0.25)
        if w:
            try: del typed[:os.write(master, typed)]
            except BlockingIOError: pass
            except OSError: typed = bytearray()
        if WAKE_R in r:
            try: os.read(WAKE_R, 512)
            except BlockingIOError: pass
        if CIN in r:
            chunk = os.read(CIN, 65536)
            if not chunk: os._exit(0)
            buf += chunk
        for fd in r:
            if fd == CIN or fd == WAKE_R: continue
            try: data = os.read(fd, 65536)
            except BlockingIOError: continue
            except OSError: data = b''  # a terminal nobody holds any more reads EIO: its end
            if data: send({'i': cid, pipes[fd]: b64(data)})
            else: os.close(fd); del pipes[fd]
        statuses.update(reap())
        if status is None and leader in statuses:
            status = statuses[leader]
            swept = sweep(statuses)  # the leader is gone: so is everything else
        quiet = 0 if r else quiet + 1
        # Swept, yet a pipe stays open and silent for a second (the waits after the leader's end
        # are 0.25 s): stop waiting. Output written just before the end is read first.
        if status is not None and quiet >= 4 and pipes:
            for fd in pipes: os.close(fd)
            pipes = {}
    code = os.waitstatus_to_exitcode(status)
    # Everything the command started is dead already (swept): the reply goes now, and the rest of
    # the cleanup runs while the host reads it. The next request is read only after it.
    send({'i': cid, 'exit': code if code >= 0 else None, 'sig': -code if code < 0 else None, 'clean': swept})
    if not (cleanup(statuses) and swept):
        send({'tainted': 'cleanup'}); os._exit(3)
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
