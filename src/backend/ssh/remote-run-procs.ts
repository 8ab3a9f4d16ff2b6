/**
 * The command runner's process handling (Python source, joined with remote-run.ts's loop): the
 * pids created since a mark (the pid before a leader's; /proc/loadavg gives the last pid now), the sweep that kills every one of
 * them carrying a call tag, a leader's start time, and starting a command.
 */
export const RUN_PROCS = String.raw`
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

def sweep(tag, mark):
    # Kill every process created since mark whose environment holds the tag, until none is left.
    needle = ("\0%s=%s\0" % (TAG, tag)).encode()
    for _ in range(8):
        hit = 0
        for pid in pids(mark):
            try:
                with open("/proc/%d/environ" % pid, "rb") as f:
                    env = b"\0" + f.read()
            except OSError:
                continue
            if needle in env:
                try:
                    os.kill(pid, signal.SIGKILL)
                    hit += 1
                except OSError:
                    pass
        if not hit:
            return

def start_time(pid):
    try:
        return read_small("/proc/%d/stat" % pid).rsplit(b") ", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return "-"

# posix_spawn (glibc's vfork and exec, no Python code in the child) where Python can ask it for a
# new session (>= 3.8, glibc >= 2.26); else subprocess.Popen (vfork on Python >= 3.10).
SPAWN = [sys.version_info >= (3, 8) and hasattr(os, "posix_spawn")]
START_DIR = os.getcwd()

def spawn(argv, cwd, env, w):
    # cwd: absolute. The child: its own session, cwd, stdin /dev/null, stdout and stderr the pipe w, the signals
    # Python ignores back to their defaults. Returns (pid, Popen or None).
    if SPAWN[0]:
        os.chdir(cwd)
        try:
            acts = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_DUP2, w, 1), (os.POSIX_SPAWN_DUP2, w, 2)]
            pid = os.posix_spawn(argv[0], argv, env, file_actions=acts, setsid=True,
                                 setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
            return pid, None
        except NotImplementedError:  # no POSIX_SPAWN_SETSID here
            SPAWN[0] = False
        finally:
            try:
                os.chdir(START_DIR)  # hold no command's directory between commands
            except OSError:
                pass
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=w, stderr=w,
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

`;
