# The relay of sdk_wrapper.sh in mode i where python3 exists: one process relays the whole run, where sh
# starts a dd and a base64 for every chunk out and a head and a base64 for every line in.
# Same protocol: a newline first on both streams, "#N" length lines (skipped: readline takes the
# line whole) and base64 lines in up to ".", ":B64" lines out, "!STATUS" last on stdout once
# both streams of the program are closed. No single quote here: sent inside single quotes.
import base64
import os
import subprocess
import sys
import threading


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data) :]


def relay_out(src, fd):
    while True:
        chunk = os.read(src, 65536)
        if not chunk:
            return
        write_all(fd, b":" + base64.b64encode(chunk) + b"\n")


def feed(dst):
    try:
        for line in sys.stdin.buffer:
            line = line.rstrip(b"\n")
            if line == b".":
                break
            if not line.startswith(b"#"):
                write_all(dst, base64.b64decode(line))
    except OSError:
        pass  # the program stopped reading: the rest of its input is dropped
    finally:
        os.close(dst)


def main():
    write_all(1, b"\n")
    write_all(2, b"\n")
    try:
        child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError:
        write_all(1, b"!127\n")
        return
    # Raw descriptors from here: the file objects would buffer.
    feeder = threading.Thread(target=feed, args=(os.dup(child.stdin.fileno()),), daemon=True)
    child.stdin.close()
    outs = [
        threading.Thread(target=relay_out, args=(child.stdout.fileno(), 1)),
        threading.Thread(target=relay_out, args=(child.stderr.fileno(), 2)),
    ]
    for t in [feeder, *outs]:
        t.start()
    status = child.wait()
    for t in outs:
        t.join()
    write_all(1, b"!%d\n" % (status if status >= 0 else 128 - status))


main()
# The feeder may still wait on input the program will never read: end without it.
os._exit(0)
