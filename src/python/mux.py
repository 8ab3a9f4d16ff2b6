"""keel's Python mux: runs the worker where only stdin, stdout and stderr reach keel (ssh, exec).

Started as `python3 -c <this file> MEMORY_LIMIT [FLAG...]` (FLAGs go to the worker's interpreter). stdin carries one frame (4-byte big-endian
length + the worker's source), then the coordinator's request bytes, relayed to the worker's fd 3.
stdout carries records `tag (1 byte) + length (4 bytes, big-endian) + data`:

  1, 2  the worker's stdout, stderr        4  the worker's fd 4 (protocol responses)
  p     the worker's pid (decimal)         x  "CODE SIGNAL" once the worker exited (last record)

The worker leads its own session and process group. EOF on stdin (keel killed the worker, or the
connection dropped) and SIGHUP/SIGTERM kill that whole group; so does the worker's own exit, after
its pipes are drained (up to 0.1 s), as on keel's own machine. Only modules built into the
interpreter are imported.
"""

import os
import select
import signal
import sys
import time

DRAIN_S = 0.1
CHUNK = 1 << 16
WORKER = []  # the worker's pid, for the last-resort kill


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_exact(fd, n):
    parts = []
    while n > 0:
        part = os.read(fd, n)
        if not part:
            return None
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass  # already gone


def above_stdio_and_protocol(fd):
    """The pipe's fd moved above 4, so the dup2s into 1-4 below cannot overwrite a source."""
    while fd < 5:
        fd = os.dup(fd)
    return fd


def spawn_in_session(argv, ends):
    """Start argv as a session leader with `ends` on fds 3, 4, 1, 2 and stdin from /dev/null."""
    # Pipes are close-on-exec; dup2 clears that on the worker's copies only.
    try:
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]
        actions += [(os.POSIX_SPAWN_DUP2, fd, target) for fd, target in zip(ends, (3, 4, 1, 2))]
        return os.posix_spawn(argv[0], argv, os.environ, file_actions=actions, setsid=True)
    except (AttributeError, NotImplementedError):
        pass  # a libc without POSIX_SPAWN_SETSID: fork and exec
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            for fd, target in zip(ends, (3, 4, 1, 2)):
                os.dup2(fd, target)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    return pid


def start_worker(source, memory, flags):
    req_r, req_w = os.pipe()
    resp_r, resp_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    ends = [above_stdio_and_protocol(fd) for fd in (req_r, resp_w, out_w, err_w)]
    argv = [sys.executable, *flags, "-c", source, memory]
    pid = spawn_in_session(argv, ends)
    for fd in {req_r, resp_w, out_w, err_w, *ends}:
        os.close(fd)
    os.set_blocking(req_w, False)
    return pid, req_w, {out_r: b"1", err_r: b"2", resp_r: b"4"}


def exit_text(status):
    if os.WIFSIGNALED(status):
        return f"- {signal.Signals(os.WTERMSIG(status)).name}"
    return f"{os.WEXITSTATUS(status)} -"


def main():
    memory = sys.argv[1] if len(sys.argv) > 1 else "0"
    header = read_exact(0, 4)
    source = header and read_exact(0, int.from_bytes(header, "big"))
    if not source:
        sys.exit(2)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    stop = []
    signal.signal(signal.SIGCHLD, lambda *_: None)
    for sig in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))

    pid, req_w, outputs = start_worker(source.decode("utf-8"), memory, sys.argv[2:])
    WORKER.append(pid)

    def emit(tag, data):
        write_all(1, tag + len(data).to_bytes(4, "big") + data)

    emit(b"p", str(pid).encode())
    pending = b""  # request bytes the worker has not read yet
    stdin_open = True
    status = None
    drain_until = None
    while True:
        if stop and status is None:
            kill_group(pid)
        if status is None:
            try:
                done, raw = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, raw = pid, 0
            if done == pid:
                status = raw
                drain_until = time.monotonic() + DRAIN_S
        if status is not None and (not outputs or time.monotonic() >= drain_until):
            break
        readers = [wake_r, *outputs] + ([0] if stdin_open else [])
        writers = [req_w] if pending else []
        timeout = None if status is None else max(0.0, drain_until - time.monotonic())
        try:
            ready_r, ready_w, _ = select.select(readers, writers, [], timeout)
        except InterruptedError:
            continue
        if ready_w and pending:
            try:
                pending = pending[os.write(req_w, pending) :]
            except BlockingIOError:
                pass
            except OSError:
                pending = b""  # the worker closed its end: its exit tells the rest
        for fd in ready_r:
            if fd == wake_r:
                os.read(wake_r, 512)
            elif fd == 0:
                data = os.read(0, CHUNK)
                if data:
                    pending += data
                else:
                    stdin_open = False
                    stop.append(1)
            else:
                data = os.read(fd, CHUNK)
                if data:
                    emit(outputs[fd], data)
                else:
                    os.close(fd)
                    del outputs[fd]
    kill_group(pid)  # whatever the worker left behind, as keel does on its own machine
    emit(b"x", exit_text(status).encode())


if __name__ == "__main__":
    try:
        main()
    finally:
        # keel is gone (a write failed) or this is the normal end: the worker never outlives the mux.
        if WORKER:
            kill_group(WORKER[0])
