import json, os, select, signal, struct, subprocess, sys, time
# What the runner relies on (Linux /proc, waitid without reaping); else the job shells run commands.
if not (hasattr(os, "waitid") and hasattr(os, "set_blocking") and os.path.isdir("/proc/self")):
    sys.exit(127)
TAG = "KEEL_CALL_TAG"
DRAIN = 0.25
# A job's p frame goes out by this long after it started (see announce).
ANNOUNCE_S = 0.005
SHELL = ["/bin/sh"]
for d in os.environ.get("PATH", "/usr/bin:/bin").split(":"):
    if d and os.access(os.path.join(d, "bash"), os.X_OK):
        SHELL = [os.path.join(d, "bash"), "--norc", "--noprofile"]
        break
BASE = dict(os.environ)
for k in ("BASH_ENV", "ENV", "CDPATH", "HISTFILE", "PWD", "OLDPWD"):
    BASE.pop(k, None)
jobs = {}
# Frames are collected and written together before the loop waits again: a command's last output,
# its exit status and its end then leave in one write (one ssh packet) instead of one each.
pending_out = bytearray()

def send(kind, jid, payload=b""):
    pending_out.extend(struct.pack(">cII", kind, jid, len(payload)))
    pending_out.extend(payload)
    if len(pending_out) >= 1 << 18:
        flush()

def flush():
    if not pending_out:
        return
    view = memoryview(bytes(pending_out))
    pending_out.clear()
    while view:
        try:
            view = view[os.write(1, view):]
        except InterruptedError:
            pass
