class Job:
    pass

def run(jid, cwd, cmd, env, tag):
    j = Job()
    j.tag = str(tag)
    e = dict(BASE)
    e.update({str(k): str(v) for k, v in env.items()})
    e[TAG] = j.tag
    cwd = os.path.join(START_DIR, cwd)
    r, w = os.pipe()
    try:
        pid, proc = spawn(SHELL + ["-c", cmd], cwd, e, w)
    except (OSError, ValueError):  # ValueError: a NUL in the command or the environment
        os.close(r)
        os.close(w)
        if not os.path.isdir(cwd):
            send(b"n", jid)
        else:
            send(b"x", jid, b"126")
        send(b"d", jid)
        return
    os.close(w)
    # Pids are handed out in order: whatever the command creates comes after its leader's, so the
    # sweep's window starts there (no /proc read before the spawn).
    j.mark = pid - 1
    os.set_blocking(r, False)
    j.proc, j.pid, j.r, j.status, j.exited, j.killed = proc, pid, r, None, None, False
    j.spawned, j.announced = time.monotonic(), False
    jobs[jid] = j

def announce(jid, j):
    # The p frame (pid, start time), before any other frame of the job. Not at once: reading
    # /proc/PID/stat while the new process is still being set up waits for it (up to ~1 ms
    # measured), so it is read when the job first has output or an exit, or ANNOUNCE_S after it
    # started, whichever comes first: a short command's p, o, x and d then leave in one write.
    if not j.announced:
        j.announced = True
        send(b"p", jid, ("%d %s" % (j.pid, start_time(j.pid))).encode())

def end_group(j, then=None):
    try:
        os.killpg(j.pid, signal.SIGKILL)
    except OSError:
        pass
    sweep(j.tag, j.mark, then)

def finish(jid):
    j = jobs.pop(jid)
    announce(jid, j)
    if j.r is not None:
        # What is already in the pipe still goes out (at most one pipe buffer's worth is left).
        try:
            for _ in range(64):
                b = os.read(j.r, 65536)
                if not b:
                    break
                send(b"o", jid, b)
        except BlockingIOError:
            pass
        os.close(j.r)
    end_group(j, lambda: done(jid, j))

def done(jid, j):
    # Once the sweep is over: nothing of the job is left.
    try:
        os.waitpid(j.pid, 0)  # the leader was left a zombie until now: its pid stayed taken
    except ChildProcessError:
        pass
    if j.proc is not None:
        j.proc.returncode = j.status  # reaped here: Popen must not wait for it again
    send(b"d", jid)

def exited(j):
    # The leader's status without reaping it (WNOWAIT).
    try:
        info = os.waitid(os.P_PID, j.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return 127
    if info is None:
        return None
    if info.si_code == os.CLD_EXITED:
        return info.si_status
    return 128 + info.si_status

def shutdown():
    for j in list(jobs.values()) + list(lives.values()):
        end_group(j)
    finish_sweeps()
    os._exit(0)  # frames not yet written go nowhere: the channel is closing

def handle(line):
    try:
        req = json.loads(line.decode("utf-8", "surrogateescape"))
    except ValueError:
        return
    if live_request(req):
        return
    if req[0] == "r":
        jid = int(req[1])
        try:
            run(jid, req[2], req[3], req[4], req[5])
        except Exception:
            if jid not in jobs:
                send(b"x", jid, b"126")
                send(b"d", jid)
    elif req[0] == "k":
        j = jobs.get(int(req[1]))
        if j is not None:
            j.killed = True
            end_group(j)
    elif req[0] == "s":
        sweep(req[1], None)

def main():
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda s, f: None)
    signal.signal(signal.SIGHUP, lambda s, f: shutdown())
    signal.signal(signal.SIGTERM, lambda s, f: shutdown())
    no_inherit()
    pending = b""
    send(b"h", 0)
    while True:
        timeout = run_sweeps()
        now = time.monotonic()
        if timeout is not None:
            timeout = max(0.0, timeout - now)
        for j in jobs.values():
            if not j.announced:
                left = max(0.0, j.spawned + ANNOUNCE_S - now)
                timeout = left if timeout is None else min(timeout, left)
            if j.exited is not None:
                left = max(0.0, j.exited + (0 if j.killed else DRAIN) - now)
                timeout = left if timeout is None else min(timeout, left)
        live_rs, live_ws = live_fds()
        fds = [0, wake_r] + [j.r for j in jobs.values() if j.r is not None] + live_rs
        flush()
        try:
            ready, writable = select.select(fds, live_ws, [], timeout)[:2]
        except InterruptedError:
            ready, writable = [], []
        if wake_r in ready:
            try:
                while os.read(wake_r, 512):
                    pass
            except BlockingIOError:
                pass
        for jid, j in list(jobs.items()):
            if j.r is None or j.r in ready or time.monotonic() >= j.spawned + ANNOUNCE_S:
                announce(jid, j)
            if j.r is not None and j.r in ready:
                # Read on to what the pipe holds now (up to 1 MB a turn): when the command has already
                # exited, its end of output is seen in this turn and its frames leave together.
                for _ in range(16):
                    try:
                        b = os.read(j.r, 65536)
                    except BlockingIOError:
                        break
                    if not b:
                        os.close(j.r)
                        j.r = None
                        break
                    send(b"o", jid, b)
            if j.exited is None:
                st = exited(j)
                if st is not None:
                    j.status, j.exited = st, time.monotonic()
                    announce(jid, j)
                    send(b"x", jid, str(st).encode())
            if j.exited is not None and (j.r is None or j.killed or time.monotonic() >= j.exited + DRAIN):
                finish(jid)
        live_turn(ready, writable)
        if 0 in ready:
            b = os.read(0, 65536)
            if not b:
                shutdown()
            pending += b
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                try:
                    handle(line)
                except Exception:
                    pass

try:
    main()
except BaseException:
    shutdown()
