/**
 * Sandboxed code looks for the host kernel's state, as an attacker would, under whatever uid keel
 * runs as (root included): any kernel interface it can open for writing (sysctls, sysrq, /sys,
 * cgroup files; opened, never written), and the host user's keys (a key added to the host's user
 * keyring before; read directly, through the keyring special ids, and after linking every keyring
 * /proc/keys lists into its own). It must find neither, and must run in a user namespace of its own.
 */

import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import { bwrapAvailable } from "../contract/backends.js";
import { NO_PYTHON } from "../python/helpers.js";

/** Prints every kernel interface it can open for writing (without writing a byte), one per line. */
const FIND_WRITABLE = `
import os, stat
def writable(p):
    try: st = os.lstat(p)
    except OSError: return False
    if not stat.S_ISREG(st.st_mode): return False
    try: fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError: return False
    os.close(fd)
    return True
def walk(top):
    for d, dirs, files in os.walk(top):
        for f in files:
            p = os.path.join(d, f)
            if writable(p): print("WRITABLE", p)
for top in ["/proc/sys", "/sys", "/sys/fs/cgroup", "/proc/irq", "/proc/bus", "/proc/fs", "/proc/driver"]:
    walk(top)
for e in os.listdir("/proc"):
    if not e.isdigit() and writable("/proc/" + e): print("WRITABLE", "/proc/" + e)
print("UIDMAP", open("/proc/self/uid_map").read().split())
`;

/** keyctl and add_key through libc's syscall(); argv: the host key's id. Prints what it could read. */
const KEYS = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
import platform
ADD, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
def keyctl(*a):
    r = libc.syscall(KEYCTL, *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return r, ctypes.get_errno()
def read(kid):
    buf = ctypes.create_string_buffer(65536)
    n, _ = keyctl(11, kid, buf, 65536)
    return buf.raw[:n] if n >= 0 else b""
host = int(sys.argv[1])
seen = [read(host)]
for special in (-1, -2, -3, -4, -5):  # thread, process, session, user, user-session keyrings
    ring = read(special)
    seen.append(ring)
    for i in range(0, len(ring) - 3, 4): seen.append(read(int.from_bytes(ring[i:i+4], "little")))
keyctl(1, 0)  # a session keyring of its own, then everything /proc/keys names linked into it
try: listed = [int(l.split()[0], 16) for l in open("/proc/keys")]
except OSError: listed = []
for kid in listed + [host]:
    keyctl(8, kid, -3)
    seen.append(read(kid))
r, e = keyctl(0, -3, 0)  # KEYCTL_GET_KEYRING_ID of the session keyring
print("KEYCALL", r, e if r < 0 else 0)
print("LISTED", len(listed))
print("SEEN", b"|".join(seen).hex())
`;

/** The same calls on the host: add a key to the user keyring, or remove it. */
const HOST_KEY = `
import ctypes, sys, platform
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ADD, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
if sys.argv[1] == "add":
    data = sys.argv[2].encode()
    print(libc.syscall(ADD, b"user", b"keel-sandbox-test", data, ctypes.c_long(len(data)), ctypes.c_long(-4)))
else:
    kid = int(sys.argv[2])
    buf = ctypes.create_string_buffer(4096)
    if sys.argv[1] == "read":
        n = libc.syscall(KEYCTL, ctypes.c_long(11), ctypes.c_long(kid), buf, ctypes.c_long(4096))
        print(buf.raw[:n].decode() if n >= 0 else "")
    else:
        libc.syscall(KEYCTL, ctypes.c_long(21), ctypes.c_long(kid))  # KEYCTL_INVALIDATE
`;

const available = await bwrapAvailable();
const arch = ["x64", "arm64"].includes(process.arch);
const why =
	available !== true
		? available
		: NO_PYTHON
			? "python3 not found"
			: arch
				? undefined
				: "x86-64 or arm64 only";

let work = "";

beforeAll(async () => {
	work = await realpath(await mkdtemp(join(tmpdir(), "keel-bwrap-kernel-")));
	await writeFile(join(work, "writable.py"), FIND_WRITABLE);
	await writeFile(join(work, "keys.py"), KEYS);
	await writeFile(join(work, "host-key.py"), HOST_KEY);
});

afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

async function sandboxed(command: string): Promise<string> {
	const b = createBwrapBackend({ roots: [work] });
	let out = "";
	try {
		await b.exec.run({ command, cwd: work, onData: (c) => (out += c.toString("utf8")) });
	} finally {
		await b.close();
	}
	return out;
}

describe.skipIf(why !== undefined)(
	`bwrap: the host kernel's state from inside${why ? ` (skipped: ${why})` : ""}`,
	() => {
		it("no kernel interface opens for writing, and the sandbox has a user namespace of its own", async () => {
			const out = await sandboxed("python3 writable.py");
			expect(out).toContain("UIDMAP");
			expect(out.split("\n").filter((l) => l.startsWith("WRITABLE"))).toEqual([]);
			// Not the host's whole-range identity map: a namespace with one uid mapped.
			const map = /UIDMAP \[(.*)\]/
				.exec(out)?.[1]
				.split(", ")
				.map((s) => Number(s.replace(/'/g, "")));
			expect(map?.[2]).toBe(1);
		}, 120_000);

		it("a key in the host user's keyring cannot be read, whatever keyring calls it tries", async () => {
			const secret = `keel-host-key-${randomBytes(8).toString("hex")}`;
			const py = (...args: string[]) =>
				execFileSync("python3", [join(work, "host-key.py"), ...args], { encoding: "utf8" }).trim();
			const id = py("add", secret);
			expect(Number(id)).toBeGreaterThan(0);
			try {
				// The host's own view: the key is there to be found.
				expect(py("read", id)).toBe(secret);
				const out = await sandboxed(`python3 keys.py ${id}`);
				const seen = Buffer.from(/SEEN ([0-9a-f]*)/.exec(out)?.[1] ?? "", "hex").toString("latin1");
				expect(out).toContain("SEEN");
				expect(seen).not.toContain(secret);
				// The keyring calls themselves fail, and /proc/keys names nothing.
				expect(out).toContain("KEYCALL -1 38");
				expect(out).toContain("LISTED 0");
			} finally {
				py("remove", id);
			}
		}, 120_000);
	},
);
