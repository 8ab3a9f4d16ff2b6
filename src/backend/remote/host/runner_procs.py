def read_small(path):
    # A /proc file in one read: fewer system calls than a file object.
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)

def last_pid():
    try:
        return int(read_small("/proc/loadavg").split()[4])
    except (OSError, ValueError, IndexError):
        return None

def pid_max():
    try:
        with open("/proc/sys/kernel/pid_max", "rb") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None

PID_MAX = pid_max()

def window(mark):
    # The pids handed out since mark (None: every pid).
    now = last_pid()
    if mark is None or now is None or PID_MAX is None:
        return None
    if now >= mark:
        n = now - mark
        if n <= 512:
            return range(mark + 1, now + 1)
    else:
        n = PID_MAX - mark + now
        if n <= 512:
            return list(range(mark + 1, PID_MAX)) + list(range(1, now + 1))
    return None

def pids(mark):
    w = window(mark)
    if w is not None:
        return w
    return [int(n) for n in os.listdir("/proc") if n.isdigit()]

def environ(pid):
    # /proc/PID/environ's bytes (b"": nothing to read), or None: gone, or another user's.
    try:
        fd = os.open("/proc/%d/environ" % pid, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        parts = []
        while True:
            b = os.read(fd, 65536)
            if not b:
                return b"".join(parts)
            parts.append(b)
    except OSError:
        return None
    finally:
        os.close(fd)

def may_be_execing(pid):
    # A live user process (not a zombie, not a kernel thread, PF_KTHREAD) whose environ was empty.
    try:
        f = read_small("/proc/%d/stat" % pid).rsplit(b") ", 1)[1].split()
        return f[0] not in (b"Z", b"X") and not int(f[6]) & 0x00200000
    except (OSError, IndexError, ValueError):
        return False

def hasten(pid):
    # A killed process dies when the scheduler next runs it; a command can keep its leftovers nearly
    # off the CPU with its session's autogroup at nice 19 (seconds to die on a busy CPU). Its owner
    # may set that back to 0 without privilege (leftovers-hasten.ts). False: try again later (EAGAIN:
    # without CAP_SYS_ADMIN, one autogroup change per 100 ms, machine-wide).
    path = "/proc/%d/autogroup" % pid
    try:
        if int(read_small(path).split()[-1]) <= 0:
            return True
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)
    except BlockingIOError:
        return False
    except (OSError, ValueError, IndexError):
        pass
    return True

# A sweep ends when a pass finds nothing tagged, killed ones still dying included: a SIGKILLed
# process keeps its environment until the scheduler lets it run its exit, milliseconds on a busy
# CPU where a pass takes microseconds (one found again is helped to its turn: hasten). A pass that
# kills nothing new is repeated a millisecond later (the loop serves other commands meanwhile):
# while killed ones remain, up to SWEEP_S in all (an unkillable D-state process); while only
# processes of the window with an empty environ remain (caught in the middle of execve: looked at
# again, never killed blind), up to UNSURE_WAITS times. Passes that kill something new run back to
# back, IN_A_ROW at a time.
SWEEP_S = 2.0
UNSURE_WAITS = 50
IN_A_ROW = 8
sweeps = []

class Sweep:
    def __init__(self, tag, mark, then):
        self.needle = ("\0%s=%s\0" % (TAG, tag)).encode()
        self.mark, self.then = mark, then  # then: called once it is over
        self.killed, self.refused, self.hastened = set(), set(), set()
        self.deadline = time.monotonic() + SWEEP_S
        self.unsure_waits = self.chased = 0
        self.due = 0.0

def sweep_step(s):
    # Passes until the sweep is over (returns None) or must wait (returns when to go on).
    while True:
        fresh = dying = unsure = False
        w = window(s.mark)
        for pid in (w if w is not None else pids(None)):
            env = environ(pid)
            if not env:
                if env is not None and w is not None and may_be_execing(pid):
                    unsure = True
                continue
            if s.needle not in env and not env.startswith(s.needle[1:]):
                continue
            if pid in s.refused:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            except OSError:
                s.refused.add(pid)  # not ours to signal after all: nothing to wait for
                continue
            if pid in s.killed:
                dying = True
                if pid not in s.hastened and hasten(pid):
                    s.hastened.add(pid)
            else:
                s.killed.add(pid)
                fresh = True
        if not fresh and not dying and (not unsure or s.unsure_waits >= UNSURE_WAITS):
            return None
        now = time.monotonic()
        if now >= s.deadline:
            return None
        if fresh:
            s.chased += 1
            if s.chased % IN_A_ROW:
                continue
        elif not dying:
            s.unsure_waits += 1
        return now + 0.001

def sweep(tag, mark, then=None):
    # Kill every process created since mark (None: every process) whose environment holds the
    # tag. The first passes run now: when they end it (the common case), then runs now too.
    s = Sweep(tag, mark, then)
    due = sweep_step(s)
    if due is None:
        if then is not None:
            then()
    else:
        s.due = due
        sweeps.append(s)

def run_sweeps():
    # The sweeps that are due go on; returns when the next one is due (None: no sweep left).
    now = time.monotonic()
    for s in list(sweeps):
        if s.due <= now:
            due = sweep_step(s)
            if due is None:
                sweeps.remove(s)
                if s.then is not None:
                    s.then()
                continue
            s.due = due
    return min(s.due for s in sweeps) if sweeps else None

def finish_sweeps():
    # At shutdown: every sweep to its end, the loop served no more.
    while sweeps:
        due = run_sweeps()
        if due is not None:
            time.sleep(max(0.0, due - time.monotonic()))

def start_time(pid):
    try:
        return read_small("/proc/%d/stat" % pid).rsplit(b") ", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return "-"

# posix_spawn (glibc's vfork and exec, no Python code in the child) where Python can ask it for a
# new session (>= 3.8, glibc >= 2.26); else subprocess.Popen (vfork on Python >= 3.10).
SPAWN = [sys.version_info >= (3, 8) and hasattr(os, "posix_spawn")]
START_DIR = os.getcwd()

# The signals a command gets at their defaults: those Python ignores, and (for a process handle, which
# is signalled by name) those the shell that started the runner may have left ignored.
DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)
HANDLE_SIGNALS = DEFAULT_SIGNALS + (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP)

def spawn(argv, cwd, env, w, stdin=None, sigdef=DEFAULT_SIGNALS):
    # cwd: absolute. The child: its own session, cwd, stdin the pipe end stdin (None: /dev/null),
    # stdout and stderr the pipe w, the signals Python ignores back to their defaults.
    # Returns (pid, Popen or None).
    if SPAWN[0]:
        os.chdir(cwd)
        try:
            first = ((os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0) if stdin is None
                     else (os.POSIX_SPAWN_DUP2, stdin, 0))
            acts = [first, (os.POSIX_SPAWN_DUP2, w, 1), (os.POSIX_SPAWN_DUP2, w, 2)]
            pid = os.posix_spawn(argv[0], argv, env, file_actions=acts, setsid=True,
                                 setsigdef=sigdef)
            return pid, None
        except NotImplementedError:  # no POSIX_SPAWN_SETSID here
            SPAWN[0] = False
        finally:
            try:
                os.chdir(START_DIR)  # hold no command's directory between commands
            except OSError:
                pass
    # Popen resets only the signals Python ignores: a handle's others stay as the runner got them.
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL if stdin is None else stdin,
                            stdout=w, stderr=w,
                            start_new_session=True, close_fds=True)
    return proc.pid, proc

def no_inherit():
    # posix_spawn keeps every descriptor that is not close-on-exec: whatever sshd or the login
    # shell left open in the runner must not reach the commands (Python opens its own close-on-exec).
    for n in os.listdir("/proc/self/fd"):
        if int(n) > 2:
            try:
                os.set_inheritable(int(n), False)
            except OSError:
                pass
