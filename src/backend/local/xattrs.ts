/**
 * Extended attributes survive a replace: before the rename, every attribute the
 * target carries is set on the temp file: `user.*`, POSIX ACLs (`system.posix_acl_access`), SELinux
 * labels, and `trusted.*` where this process can see them. Node has no call for this: they go
 * through local/libc.ts.
 *
 * They are read through the handle the compare-and-swap then checks (local/commit.ts), so they
 * come from the very file whose identity and bytes the swap accepts, whatever happens to its name.
 */
import type { KeelError } from "../../boundary/errors.js";
import { pathFact } from "../../boundary/path-facts.js";
import type { LazyLibc, Libc } from "./libc.js";

/**
 * Not copied: file capabilities. Writing a file in place makes the kernel drop them (as it drops
 * setuid on a write by another user), so a replacement that kept them would keep what an edit
 * in place would not.
 */
const NOT_COPIED = new Set(["security.capability"]);

/** The kernel's limits for one value and for the list of names (XATTR_SIZE_MAX, XATTR_LIST_MAX). */
const MAX_BYTES = 64 * 1024;

/** Every attribute of one file, names and values, as one comparable buffer; null when it has none. */
export type XattrSnapshot = Buffer | null;

export interface XattrCopier {
	/**
	 * Give the new file `toFd` every attribute of the file open at `fromFd`, and return what the
	 * source carried. Throws PERMISSION_DENIED, naming the attribute, when one cannot be set: a
	 * replace never silently drops one.
	 */
	copy(fromFd: number, toFd: number, target: string): XattrSnapshot;
	/**
	 * Whether the file open at `fd` still carries exactly `snap`. ctime alone cannot tell where it
	 * is coarse (kernels before 6.13): a change within the clock tick of the last one leaves it.
	 */
	unchanged(fd: number, snap: XattrSnapshot): boolean;
	/** False where the FFI could not load (an unsupported platform): attributes are then not kept. */
	readonly available: boolean;
}

interface Attr {
	/** The name's bytes with their terminating NUL. */
	name: Buffer;
	text: string;
	value: Buffer;
}

/** One per backend, on its libc binding; a 64 KiB scratch buffer made on first use. */
export function createXattrCopier(lib: LazyLibc): XattrCopier {
	let scratch: Buffer | undefined;
	const failed = (c: Libc, target: string, what: string): KeelError =>
		pathFact("attributes-not-kept", target, { detail: `${what} (${c.errnoName()})` });
	/** The attributes of `fd`; `onError` names what failed. Empty when none (the common case: one call). */
	const readAll = (c: Libc, fd: number, onError: (what: string) => never): Attr[] => {
		scratch ??= Buffer.allocUnsafe(MAX_BYTES);
		const listed = c.flistxattr(fd, scratch, scratch.length);
		if (listed === 0) return [];
		if (listed < 0) {
			const why = c.errnoName();
			// A file system without extended attributes: nothing to keep.
			if (why === "ENOTSUP" || why === "EOPNOTSUPP") return [];
			onError("list");
		}
		const names = Buffer.from(scratch.subarray(0, listed));
		const attrs: Attr[] = [];
		for (let at = 0; at < names.length; ) {
			const end = names.indexOf(0, at);
			if (end < 0) break;
			const name = names.subarray(at, end + 1);
			const text = name.toString("utf8", 0, name.length - 1);
			at = end + 1;
			const len = c.fgetxattr(fd, name, scratch, scratch.length);
			if (len < 0) onError(`read (${text})`);
			attrs.push({ name, text, value: Buffer.from(scratch.subarray(0, len)) });
		}
		return attrs;
	};
	const snapshot = (attrs: Attr[]): XattrSnapshot => {
		if (attrs.length === 0) return null;
		const parts: Buffer[] = [];
		for (const a of attrs) {
			const len = Buffer.allocUnsafe(4);
			len.writeUInt32LE(a.value.length);
			parts.push(a.name, len, a.value);
		}
		return Buffer.concat(parts);
	};
	return {
		get available() {
			return lib() !== null;
		},
		copy(fromFd, toFd, target) {
			const c = lib();
			if (!c) return null;
			const attrs = readAll(c, fromFd, (what) => {
				throw failed(c, target, what);
			});
			for (const { name, text, value } of attrs) {
				if (NOT_COPIED.has(text)) continue;
				if (text.startsWith("security.")) {
					// A label the new file already got from policy is left as it is.
					scratch ??= Buffer.allocUnsafe(MAX_BYTES);
					const had = c.fgetxattr(toFd, name, scratch, scratch.length);
					if (had === value.length && scratch.subarray(0, had).equals(value)) continue;
				}
				if (c.fsetxattr(toFd, name, value, value.length, 0) !== 0) throw failed(c, target, `set (${text})`);
			}
			return snapshot(attrs);
		},
		unchanged(fd, snap) {
			const c = lib();
			if (!c) return true;
			let now: XattrSnapshot;
			try {
				now = snapshot(
					readAll(c, fd, () => {
						throw new Error("unreadable");
					}),
				);
			} catch {
				return false; // what cannot be read now cannot be shown to be unchanged
			}
			return now === null ? snap === null : snap !== null && now.equals(snap);
		},
	};
}
