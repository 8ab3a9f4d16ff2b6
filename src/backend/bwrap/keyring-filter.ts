/**
 * The sandbox has no kernel keyring: a seccomp filter (bwrap --seccomp) makes add_key, request_key
 * and keyctl fail with ENOSYS, as on a kernel built without keys (libkeyutils users fall back).
 *
 * Why a filter and not a keyring of its own: keys are not namespaced by owner. Sandboxed code runs
 * as the host uid (uid 0 under root, user namespace or not), so a new session keyring does not
 * help: it can still find the host user's keyring in /proc/keys, link it into its own and read
 * every key in it; and a session keyring inherited from keel's parent is reachable directly.
 *
 * The program is classic BPF (struct sock_filter, host byte order): check the architecture, then
 * the syscall number; any other architecture or call is allowed. One program per runner, in an
 * unlinked file (no name a sandbox could reach); each start reads it through a fresh descriptor.
 */
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { endianness, tmpdir } from "node:os";
import { join } from "node:path";

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const ENOSYS = 38;
// BPF opcodes: load a word of struct seccomp_data at an offset; jump if equal; return.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const RET_K = 0x06;
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
/** x32 system calls are x86-64's with this bit set. */
const X32_BIT = 0x40000000;

/** add_key, request_key, keyctl per audit architecture. */
const KEY_CALLS: readonly { arch: number; nrs: readonly number[] }[] = [
	{ arch: 0xc000003e, nrs: [248, 249, 250, 248 | X32_BIT, 249 | X32_BIT, 250 | X32_BIT] }, // x86-64, x32
	{ arch: 0x40000003, nrs: [286, 287, 288] }, // i386
	{ arch: 0xc00000b7, nrs: [217, 218, 219] }, // aarch64
	{ arch: 0x40000028, nrs: [309, 310, 311] }, // arm
	{ arch: 0xc00000f3, nrs: [217, 218, 219] }, // riscv64
	{ arch: 0xc0000015, nrs: [269, 270, 271] }, // ppc64le
	{ arch: 0x80000016, nrs: [278, 279, 280] }, // s390x
];

type Insn = [code: number, jt: number, jf: number, k: number];

/** The filter program's bytes. */
export function keyringFilterProgram(): Buffer {
	const insns: Insn[] = [[LD_W_ABS, 0, 0, ARCH_OFFSET]];
	const denyJumps: number[] = []; // indexes of jumps to the final "deny"
	for (const { arch, nrs } of KEY_CALLS) {
		// Not this architecture: skip its block (load, one test per call, allow).
		insns.push([JEQ_K, 0, nrs.length + 2, arch]);
		insns.push([LD_W_ABS, 0, 0, NR_OFFSET]);
		for (const nr of nrs) {
			denyJumps.push(insns.length);
			insns.push([JEQ_K, 0, 0, nr]);
		}
		insns.push([RET_K, 0, 0, SECCOMP_RET_ALLOW]);
	}
	insns.push([RET_K, 0, 0, SECCOMP_RET_ALLOW]);
	const deny = insns.length;
	insns.push([RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS]);
	for (const i of denyJumps) insns[i][1] = deny - i - 1;
	const out = Buffer.alloc(insns.length * 8);
	const le = endianness() === "LE";
	insns.forEach(([code, jt, jf, k], i) => {
		if (le) out.writeUInt16LE(code, i * 8);
		else out.writeUInt16BE(code, i * 8);
		out.writeUInt8(jt, i * 8 + 2);
		out.writeUInt8(jf, i * 8 + 3);
		if (le) out.writeUInt32LE(k >>> 0, i * 8 + 4);
		else out.writeUInt32BE(k >>> 0, i * 8 + 4);
	});
	return out;
}

/** Linux's O_TMPFILE (Node does not name it): a file with no name in `dir`. */
const O_TMPFILE = 0o20000000 | constants.O_DIRECTORY;

/** The filter in a file with no name, held open; `open()` gives bwrap a descriptor of its own. */
export class KeyringFilter {
	private fd: number | undefined;

	/** A new read-only descriptor on the program, at offset 0 (the caller closes it). */
	open(): number {
		this.fd ??= writeProgram(keyringFilterProgram());
		return openSync(`/proc/self/fd/${this.fd}`, constants.O_RDONLY);
	}

	close(): void {
		if (this.fd !== undefined) closeSync(this.fd);
		this.fd = undefined;
	}
}

/** An unnamed file: O_TMPFILE, or (a file system without it) a file unlinked at once. */
function unnamedFile(): number {
	try {
		return openSync(tmpdir(), O_TMPFILE | constants.O_RDWR, 0o400);
	} catch {
		const dir = mkdtempSync(join(tmpdir(), "keel-seccomp-"));
		try {
			return openSync(join(dir, "filter"), "wx+", 0o400);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	}
}

function writeProgram(program: Buffer): number {
	const fd = unnamedFile();
	try {
		writeSync(fd, program);
		return fd;
	} catch (e) {
		closeSync(fd);
		throw e;
	}
}
