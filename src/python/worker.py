"""keel's persistent Python worker.

One process per session. Not a program by itself: launcher.ts joins worker_protocol.py (the
frames on fds 3 and 4, the end markers on fds 1 and 2: read_request, send, end_streams) and this
file into one source, run as `python -c` on every backend (the mux passes it on the same way).

User code runs in a persistent module registered as __main__ (so pickle finds its classes); a
script runs like `python script.py`: in a fresh __main__ module with sys.argv = [path] and its
directory first on sys.path, leaving the persistent namespace untouched.

Startup cost: only C modules are imported up front (_ast, _json, binascii). The json package,
traceback and linecache are imported only if needed.
"""

import _ast
import binascii
import builtins
import os
import sys
import time

MAX_REPR_CHARS = 20_000
MAX_MESSAGE_CHARS = 2_000
MAX_TRACEBACK_CHARS = 8_000
# Cell sources kept for tracebacks (linecache); older cells are forgotten.
MAX_CELL_SOURCES = 200
CO_COROUTINE = 0x80
ModuleType = type(sys)


def clip_head(text, limit):
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"\n... [{len(text) - limit} more characters]", True


def clip_tail(text, limit):
    if len(text) <= limit:
        return text
    return f"[... {len(text) - limit} characters omitted]\n" + text[-limit:]


class CellSources:
    """Sources of inline code cells, registered with linecache so tracebacks show the lines."""

    def __init__(self):
        self.pending = {}
        self.order = []

    def add(self, filename, code):
        self.pending[filename] = code
        self.order.append(filename)
        if len(self.order) > MAX_CELL_SOURCES:
            old = self.order.pop(0)
            self.pending.pop(old, None)
            linecache = sys.modules.get("linecache")
            if linecache is not None:
                linecache.cache.pop(old, None)
        if "linecache" in sys.modules:
            self.register()

    def register(self):
        import linecache

        for filename, code in self.pending.items():
            linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        self.pending.clear()


def user_traceback(exc, sources):
    import traceback

    sources.register()
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


def describe_exception(exc, sources):
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - a broken __str__ must not kill the worker
        message = "<exception message unavailable>"
    return {
        "type": type(exc).__qualname__,
        "message": clip_head(message, MAX_MESSAGE_CHARS)[0],
        "traceback": user_traceback(exc, sources),
    }


def new_main_module():
    mod = ModuleType("__main__")
    mod.__dict__["__builtins__"] = builtins
    return mod


def run_code_object(code, namespace):
    """exec/eval `code`; a cell with top-level await runs to completion on a fresh event loop."""
    result = eval(code, namespace)
    if code.co_flags & CO_COROUTINE:
        import asyncio

        result = asyncio.run(result)
    return result


class Worker:
    def __init__(self):
        self.main = new_main_module()
        sys.modules["__main__"] = self.main
        self.cells = 0
        self.sources = CellSources()

    def run_code(self, code):
        self.cells += 1
        filename = f"<python-{self.cells}>"
        self.sources.add(filename, code)
        flags = _ast.PyCF_ONLY_AST | getattr(_ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
        tree = compile(code, filename, "exec", flags)
        last = None
        if tree.body and isinstance(tree.body[-1], _ast.Expr):
            last = _ast.Expression(tree.body.pop().value)
        sys.path[0] = ""
        namespace = self.main.__dict__
        run_flags = flags & ~_ast.PyCF_ONLY_AST
        run_code_object(compile(tree, filename, "exec", run_flags), namespace)
        if last is None:
            return None, False
        return run_code_object(compile(last, filename, "eval", run_flags), namespace), True

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
                value, has_value = self.run_script(req["path"], binascii.a2b_base64(req["source"]))
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
            reply["exception"] = describe_exception(exc, self.sources)
        reply["elapsedMs"] = (time.perf_counter() - started) * 1000
        reply["markers"] = end_streams(req["marker"].encode("ascii"))
        send(reply)


# The worker's own frames are recognised by their code's file name, exactly as Python records it.
WORKER_FILE = Worker.handle.__code__.co_filename


def setup(argv):
    for fd in (REQ_FD, RESP_FD):
        os.set_inheritable(fd, False)  # children of user code must not hold the protocol
    limit = int(argv[1]) if len(argv) > 1 else 0
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
        req = read_request()
        if req is None:
            break
        worker.handle(req)
    # The coordinator is gone (EOF). os._exit: user threads must not keep an orphan alive.
    end_streams(b"")
    os._exit(0)


if __name__ == "__main__":
    main()
