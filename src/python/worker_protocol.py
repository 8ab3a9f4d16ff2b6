"""The worker's side of keel's Python protocol (joined before worker.py by launcher.ts).

  fd 3  coordinator -> worker   requests
  fd 4  worker -> coordinator   responses

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON. The worker
answers every request with exactly one frame carrying the same "id"; on startup it sends one
"ready" frame (id 0).

stdout and stderr (fds 1 and 2) are plain pipes the coordinator streams into bounded, spilling
sinks, so print() and subprocess output can never corrupt the protocol. After each job the worker
flushes both and writes the job's random end marker to each, so the coordinator knows which bytes
belong to the job even though the pipes and the protocol fd are read independently.

Only C modules are imported (_json, os, sys): the json package (which pulls in re, enum,
functools, collections: ~40% of the worker's start-up time) only if the accelerator fails.
"""

import os
import sys

REQ_FD = 3
RESP_FD = 4
MAX_REQUEST_BYTES = 64 * 1024 * 1024


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


def read_request():
    """The next request, or None once the coordinator is gone (EOF). A frame past the limit is fatal."""
    header = read_exact(4)
    if header is None:
        return None
    size = int.from_bytes(header, "big")
    if size > MAX_REQUEST_BYTES:
        os._exit(71)
    body = read_exact(size)
    if body is None:
        return None
    return decode_json(body.decode("utf-8"))


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
