import base64, fcntl, termios
# Process handles: commands that outlive their request. Each leads its own session, with stdin a
# pipe (or a pseudo-terminal for stdin and output alike), and carries its call tag. Its output goes
# out as it comes; its end of output (e) and exit (x) are told apart; its leader stays unreaped (its
# pid, the group's id, taken) until a kill ends the group and sweeps the tag, or the channel closes.
lives = {}

class Live:
    pass

def live_env(env, tag, tty):
    e = dict(BASE)
    e.update({str(k): str(v) for k, v in env.items()})
    e[TAG] = str(tag)
    if tty:
        e["TERM"] = "xterm-256color"
    return e

def tty_spawn(argv, cwd, env, cols, rows):
    # fork, not posix_spawn: the child must make the terminal its controlling one (TIOCSCTTY).
    master, slave = os.openpty()
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            for fd in (0, 1, 2):
                os.dup2(slave, fd)
            os.chdir(cwd)
            for s in HANDLE_SIGNALS + (signal.SIGCHLD,):
                signal.signal(s, signal.SIG_DFL)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    os.close(slave)
    return pid, master

def start_live(jid, cwd, cmd, env, tag, cols, rows):
    cwd = os.path.join(START_DIR, cwd)
    if not os.path.isdir(cwd):
        send(b"n", jid)
        send(b"d", jid)
        return
    tty = cols > 0 and rows > 0
    e = live_env(env, tag, tty)
    j = Live()
    j.tag, j.tty, j.proc = str(tag), tty, None
    if tty:
        pid, master = tty_spawn(SHELL + ["-c", cmd], cwd, e, cols, rows)
        j.r, j.w = master, master
    else:
        r, w = os.pipe()
        sr, sw = os.pipe()
        try:
            pid, j.proc = spawn(SHELL + ["-c", cmd], cwd, e, w, sr, HANDLE_SIGNALS)
        except BaseException:
            os.close(r)
            os.close(sw)
            raise
        finally:
            os.close(w)
            os.close(sr)
        j.r, j.w = r, sw
        os.set_blocking(sw, False)
    os.set_blocking(j.r, False)
    j.pid, j.mark = pid, pid - 1
    j.exited = j.killed = False
    j.stdin_open, j.close_after = True, False
    j.pending = bytearray()
    j.acks = []  # (seq, pending length that completes it)
    lives[jid] = j
    send(b"p", jid, ("%d -" % pid).encode())

def live_exit(j):
    # The leader's exit without reaping it: "c CODE" or "s SIGNAL", or None while it runs.
    try:
        info = os.waitid(os.P_PID, j.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return "c 127"
    if info is None:
        return None
    if info.si_code == os.CLD_EXITED:
        return "c %d" % info.si_status
    return "s %d" % info.si_status

def close_stdin(jid, j, ok):
    # Writes not yet done are answered with ok (False: they were lost).
    for seq, _ in j.acks:
        send(b"a", jid, ("%d %d" % (seq, 1 if ok else 0)).encode())
    j.acks, j.pending, j.stdin_open = [], bytearray(), False
    if j.w is not None and j.w != j.r:
        os.close(j.w)
    j.w = None

def live_write(jid, seq, data):
    j = lives.get(jid)
    if j is None or not j.stdin_open or j.close_after:
        send(b"a", jid, ("%d 0" % seq).encode())
        return
    j.pending.extend(data)
    j.acks.append((seq, len(j.pending)))
    flush_stdin(jid, j)

def flush_stdin(jid, j):
    while j.pending:
        try:
            n = os.write(j.w, j.pending)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            close_stdin(jid, j, False)  # the reader is gone (EPIPE, or the terminal's EIO)
            return
        del j.pending[:n]
        done = [a for a in j.acks if a[1] <= n]
        j.acks = [(s, end - n) for s, end in j.acks if end > n]
        for seq, _ in done:
            send(b"a", jid, ("%d 1" % seq).encode())
    if j.close_after and j.stdin_open:
        close_stdin(jid, j, True)

def live_close_stdin(jid):
    j = lives.get(jid)
    if j is None or not j.stdin_open:
        return
    if j.tty:
        live_write_raw(jid, j, b"\x04")  # the terminal's end of file (VEOF)
        return
    j.close_after = True
    flush_stdin(jid, j)

def live_write_raw(jid, j, data):
    j.pending.extend(data)
    flush_stdin(jid, j)

def live_signal(jid, name):
    j = lives.get(jid)
    num = getattr(signal, str(name), None)
    if j is None or j.killed or not isinstance(num, int):
        return
    try:
        os.killpg(j.pid, num)
    except OSError:
        pass

def live_kill(jid):
    j = lives.get(jid)
    if j is None or j.killed:
        return
    j.killed = True
    end_group(j, lambda: live_done(jid, j))

def live_done(jid, j):
    # Once the sweep is over: nothing of the handle is left.
    if j.stdin_open:
        close_stdin(jid, j, False)
    if j.r is not None:
        live_read(jid, j)
    if j.r is not None:
        os.close(j.r)
        j.r = None
        send(b"e", jid)
    if not j.exited:
        send(b"x", jid, (live_exit(j) or "s %d" % signal.SIGKILL).encode())
    try:
        os.waitpid(j.pid, 0)
    except ChildProcessError:
        pass
    if j.proc is not None:
        j.proc.returncode = 0  # reaped here: Popen must not wait for it again
    lives.pop(jid, None)
    send(b"d", jid)

def live_read(jid, j):
    for _ in range(16):
        try:
            b = os.read(j.r, 65536)
        except BlockingIOError:
            return
        except OSError:
            b = b""  # a terminal nobody holds any more reads EIO: its end (any other error ends it too)
        if not b:
            if j.tty and j.stdin_open:
                close_stdin(jid, j, False)
            os.close(j.r)
            j.r = None
            send(b"e", jid)
            return
        send(b"o", jid, b)

def live_fds():
    # What the loop waits on for the handles: (readable, writable).
    rs = [j.r for j in lives.values() if j.r is not None and not j.killed]
    ws = [j.w for j in lives.values() if j.w is not None and j.pending and not j.killed]
    return rs, ws

def live_turn(readable, writable):
    for jid, j in list(lives.items()):
        if j.killed:
            continue
        if j.w is not None and j.w in writable:
            flush_stdin(jid, j)
        if j.r is not None and j.r in readable:
            live_read(jid, j)
        if not j.exited:
            st = live_exit(j)
            if st is not None:
                j.exited = True
                send(b"x", jid, st.encode())

def live_request(req):
    # A handle's request; False: not one.
    kind = req[0]
    if kind == "l":
        jid = int(req[1])
        try:
            start_live(jid, req[2], req[3], req[4], req[5], int(req[6]), int(req[7]))
        except Exception:
            if jid not in lives:
                send(b"x", jid, b"c 126")
                send(b"e", jid)
                send(b"d", jid)
    elif kind == "w":
        live_write(int(req[1]), int(req[2]), base64.b64decode(req[3]))
    elif kind == "c":
        live_close_stdin(int(req[1]))
    elif kind == "g":
        live_signal(int(req[1]), req[2])
    elif kind == "k" and int(req[1]) in lives:
        live_kill(int(req[1]))
    else:
        return False
    return True
