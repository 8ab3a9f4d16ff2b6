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

Startup cost: only C modules are imported up front (_ast, _json, binascii). The json package
(which pulls in re, enum, functools, collections: ~40% of this worker's start-up time),
traceback and linecache are imported only if needed.
"""

import _ast
import binascii
import builtins
import os
import sys
import time

REQ_FD = 3
RESP_FD = 4
MAX_REQUEST_BYTES = 64 * 1024 * 1024
MAX_REPR_CHARS = 20_000
MAX_MESSAGE_CHARS = 2_000
MAX_TRACEBACK_CHARS = 8_000
# Cell sources kept for tracebacks (linecache); older cells are forgotten.
MAX_CELL_SOURCES = 200
CO_COROUTINE = 0x80
ModuleType = type(sys)


def make_codec():
    """(decode, encode) for JSON text: the C accelerator directly, else the json package."""
    try:
        import _json

        class Context:
            strict = True
            object_hook = None
            object_pairs_hook = None
            parse_float = float
            parse_int = int

            @staticmethod
            def parse_constant(name):
                return float(name.replace("Infinity", "inf"))

        scan = _json.make_scanner(Context())
        # ensure_ascii: lone surrogates in exception messages stay valid JSON.
        encoder = _json.make_encoder(
            None, None, _json.encode_basestring_ascii, None, ":", ",", False, False, True
        )

        def decode(text):
            value, end = scan(text, 0)
            if end != len(text):
                raise ValueError("trailing data after the JSON value")
            return value

        def encode(obj):
            return "".join(encoder(obj, 0))

        if decode(encode({"a": [1, 2.5, None, True, "\xe9"]})) != {"a": [1, 2.5, None, True, "\xe9"]}:
            raise ValueError("C JSON accelerator self-check failed")
        return decode, encode
    except Exception:  # noqa: BLE001 - any surprise in the private API: use the public one
        import json

        return json.loads, lambda obj: json.dumps(obj, ensure_ascii=True)


decode_json, encode_json = make_codec()


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
    body = encode_json(obj).encode("ascii")
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


def end_streams(marker):
    """Flush user-visible output, then write the job's end marker to fds 1 and 2."""
    streams = [sys.stdout, sys.stderr]
    streams += [s for s in (sys.__stdout__, sys.__stderr__) if s not in streams]
    for stream in streams:
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
        header = read_exact(4)
        if header is None:
            break
        size = int.from_bytes(header, "big")
        if size > MAX_REQUEST_BYTES:
            os._exit(71)
        body = read_exact(size)
        if body is None:
            break
        worker.handle(decode_json(body.decode("utf-8")))
    # The coordinator is gone (EOF). os._exit: user threads must not keep an orphan alive.
    end_streams(b"")
    os._exit(0)


if __name__ == "__main__":
    main()
