"""keel's persistent Python worker (REQUIREMENTS R6, T3).

One process per session. Protocol frames travel on dedicated file descriptors, never on stdout:

  fd 3  coordinator -> worker   requests
  fd 4  worker -> coordinator   responses

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON. The worker
answers every request with exactly one frame carrying the same "id"; on startup it sends one
"ready" frame (id 0).

stdout and stderr (fds 1 and 2) are plain pipes the coordinator streams into bounded, spilling
sinks, so print() and subprocess output can never corrupt the protocol. After each job the worker
flushes both and writes the job's random end marker to each, so the coordinator knows which bytes
belong to the job even though the pipes and the protocol fd are read independently.

User code runs in a persistent module registered as __main__ (so pickle finds its classes); a
script runs like `python script.py`: in a fresh __main__ module with sys.argv = [path] and its
directory first on sys.path, leaving the persistent namespace untouched.
"""

import ast
import base64
import builtins
import json
import linecache
import os
import sys
import time
import traceback
import types

REQ_FD = 3
RESP_FD = 4
MAX_REQUEST_BYTES = 64 * 1024 * 1024
MAX_REPR_CHARS = 20_000
MAX_MESSAGE_CHARS = 2_000
MAX_TRACEBACK_CHARS = 8_000


def read_exact(n):
    chunks = []
    while n > 0:
        chunk = os.read(REQ_FD, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def send(obj):
    # ensure_ascii: lone surrogates in exception messages stay valid JSON.
    body = json.dumps(obj, ensure_ascii=True).encode("ascii")
    try:
        write_all(RESP_FD, len(body).to_bytes(4, "big") + body)
    except OSError:
        # User code closed or broke the protocol fd: nobody can hear us. Die, and the
        # coordinator reports a crash and resets.
        os._exit(70)


def clip_head(text, limit):
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"\n... [{len(text) - limit} more characters]", True


def clip_tail(text, limit):
    if len(text) <= limit:
        return text
    return f"[... {len(text) - limit} characters omitted]\n" + text[-limit:]


def user_traceback(exc):
    tb = exc.__traceback__
    # Drop the worker's own frames: the model only needs the frames of its code.
    while tb is not None and tb.tb_frame.f_code.co_filename == WORKER_FILE:
        tb = tb.tb_next
    report = traceback.TracebackException(type(exc), exc, tb)
    lines = list(report.format())
    final = list(report.format_exception_only())
    # Bound the stack (tail kept) and the final "Type: message" line separately, so a huge
    # message cannot push the frames out.
    last = clip_head("".join(final), MAX_MESSAGE_CHARS)[0]
    stack = clip_tail("".join(lines[: len(lines) - len(final)]), MAX_TRACEBACK_CHARS - len(last))
    return stack + last


def describe_exception(exc):
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - a broken __str__ must not kill the worker
        message = "<exception message unavailable>"
    return {
        "type": type(exc).__qualname__,
        "message": clip_head(message, MAX_MESSAGE_CHARS)[0],
        "traceback": user_traceback(exc),
    }


def new_main_module():
    mod = types.ModuleType("__main__")
    mod.__dict__["__builtins__"] = builtins
    return mod


class Worker:
    def __init__(self):
        self.main = new_main_module()
        sys.modules["__main__"] = self.main
        self.cells = 0

    def run_code(self, code):
        self.cells += 1
        filename = f"<python-{self.cells}>"
        # Register the source so tracebacks show the offending lines.
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        tree = ast.parse(code, filename, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        sys.path[0] = ""
        namespace = self.main.__dict__
        exec(compile(tree, filename, "exec"), namespace)
        if last is None:
            return None, False
        value = eval(compile(last, filename, "eval"), namespace)
        return value, True

    def run_script(self, path, source):
        code = compile(source, path, "exec")
        mod = new_main_module()
        mod.__file__ = path
        saved = (sys.modules.get("__main__"), sys.argv, sys.path[0])
        sys.modules["__main__"] = mod
        sys.argv = [path]
        sys.path[0] = os.path.dirname(path)
        try:
            exec(code, mod.__dict__)
        finally:
            sys.modules["__main__"], sys.argv, sys.path[0] = saved
        return None, False

    def handle(self, req):
        started = time.perf_counter()
        reply = {"id": req["id"], "ok": True, "memoryError": False}
        try:
            os.chdir(req["cwd"])
            if req["op"] == "script":
                value, has_value = self.run_script(req["path"], base64.b64decode(req["source"]))
            else:
                value, has_value = self.run_code(req["code"])
            if has_value and value is not None:
                try:
                    text = repr(value)
                except BaseException as exc:  # noqa: BLE001
                    text = f"<repr() failed: {type(exc).__qualname__}: {exc}>"
                reply["repr"], reply["reprTruncated"] = clip_head(text, MAX_REPR_CHARS)
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: the session keeps its state
            reply["ok"] = False
            reply["memoryError"] = isinstance(exc, MemoryError)
            reply["exception"] = describe_exception(exc)
        reply["elapsedMs"] = (time.perf_counter() - started) * 1000
        reply["markers"] = end_streams(req["marker"].encode("ascii"))
        send(reply)


# The worker's own frames are recognised by their code's file name, exactly as Python records it.
WORKER_FILE = Worker.handle.__code__.co_filename


def end_streams(marker):
    """Flush user-visible output, then write the job's end marker to fds 1 and 2."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - replaced or closed by user code
            pass
    written = []
    for fd in (1, 2):
        try:
            write_all(fd, marker)
            written.append(True)
        except OSError:
            written.append(False)
    return written


def setup(argv):
    for fd in (REQ_FD, RESP_FD):
        os.set_inheritable(fd, False)  # children of user code must not hold the protocol
    limit = int(argv[1]) if len(argv) > 1 and argv[1] != "0" else 0
    if limit > 0:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8", errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    # Like `python -c`: the current directory first on sys.path, not this file's directory.
    sys.path[0] = ""
    sys.argv = [""]


def main():
    setup(sys.argv)
    worker = Worker()
    send(
        {
            "id": 0,
            "op": "ready",
            "pid": os.getpid(),
            "python": sys.version.split()[0],
            "executable": sys.executable,
        }
    )
    while True:
        header = read_exact(4)
        if header is None:
            break
        size = int.from_bytes(header, "big")
        if size > MAX_REQUEST_BYTES:
            os._exit(71)
        body = read_exact(size)
        if body is None:
            break
        worker.handle(json.loads(body))
    # The coordinator is gone (EOF). os._exit: user threads must not keep an orphan alive.
    end_streams(b"")
    os._exit(0)


if __name__ == "__main__":
    main()
