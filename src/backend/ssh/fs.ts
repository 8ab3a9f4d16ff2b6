/**
 * FileOps on the remote host. Bytes and names travel over SFTP; the facts SFTP v3 lacks (inode,
 * nanosecond times, hashes) and the check-then-commit steps run in the helper shell, so the
 * compare-and-swap is one remote script with no network round trip between check and rename.
 *
 * A write: temp file beside the target created exclusively over SFTP with the target's mode,
 * written, fsynced (fsync@openssh.com); then either hardlink@openssh.com (link(2): fails if the
 * target appeared, so a create never clobbers) or, in the helper, hash + identity check and
 * rename(2) via `mv -T`; then the directory is synced. A failed commit removes its temp file; a
 * dropped connection can leave one, which sweepTemps removes once it is older than
 * `staleTempMinutes` (a writer's pid means nothing on another host).
 */
import { posix } from "node:path";
import type { SFTPWrapper } from "ssh2";
import { writeCollision } from "../changed-errors.js";
import { sameIdentity, sameObject, tempNameFor } from "../temp-names.js";
import type { DirEntry, Expected, FileOps, FileStat, ReadCurrent, WriteOptions } from "../types.js";
import type { SshConnection } from "./connection.js";
import { sysError } from "./errors.js";
import { lookFast, PUT_MAX_BYTES, putFast, readCurrentFast, readFast } from "./fs-fast.js";
import {
	changed,
	hasStat,
	helper,
	lstatOf,
	replyError,
	sourceChanged,
	statAfter,
	statFrom,
	swapped,
} from "./fs-replies.js";
import { formatIdentity, parseIdentity, typeOfSftpMode } from "./identity.js";
import { ask, type Live } from "./live.js";
import type { SshFsOptions } from "./options.js";
import {
	readSftp,
	sftpClose,
	sftpFchmod,
	sftpFsync,
	sftpHardlink,
	sftpLstat,
	sftpOpen,
	sftpReaddir,
	sftpReadlink,
	sftpRealpath,
	sftpRmdir,
	sftpStat,
	sftpUnlink,
	writeAll,
} from "./sftp-io.js";
import type { HelperReply } from "./shell.js";

export type { SshFsOptions } from "./options.js";

/** Undo a failed commit's mkdir -p: remove `dir` and its parents up to `top`, while they are empty. */
async function removeEmptyDirs(sftp: SFTPWrapper, dir: string, top: string): Promise<void> {
	for (let d = dir; d.length >= top.length; d = posix.dirname(d)) {
		try {
			await sftpRmdir(sftp, d);
		} catch {
			return;
		}
		if (d === top) return;
	}
}

type Fill = (live: Live, temp: string, handle: Buffer) => Promise<void>;

export function createSshFs(conn: SshConnection, opts: SshFsOptions = {}): FileOps {
	const staleMinutes = opts.staleTempMinutes ?? 60;
	const identity = (live: Live, st: FileStat) => formatIdentity(st, live.caps.nsTimes);

	/** Temp file beside `target`, filled and made durable, committed according to `opts.expect`. */
	async function commitVia(
		live: Live,
		target: string,
		wopts: WriteOptions,
		fill: Fill,
		afterClose?: (temp: string) => Promise<void>,
	): Promise<FileStat> {
		const { sftp } = live;
		const dir = posix.dirname(target);
		// Only the type and mode of what is there now are needed: SFTP's lstat says that without
		// starting a process; mkdir -p (and noting what it made) takes the helper.
		let made: string | undefined;
		let before: { type: string; mode: number } | null;
		if (wopts.mkdirs) {
			const prep = await helper(live, target, "k_prep", dir, "1", target);
			made = /^made (.*)$/ms.exec(prep)?.[1];
			before = prep.startsWith("st ") ? statAfter(prep, target) : null;
		} else {
			before = await sftpLstat(sftp, target).then(
				(a) => ({ type: typeOfSftpMode(a.mode), mode: a.mode & 0o7777 }),
				async (e) => {
					if ((e as { code?: string }).code === "ENOENT") return null;
					// SFTP v3 gives no errno for most failures: the helper fails with the exact one.
					const prep = await helper(live, target, "k_prep", dir, "0", target);
					return prep.startsWith("st ") ? statAfter(prep, target) : null;
				},
			);
		}
		if (before?.type === "dir") throw sysError("EISDIR", "is a directory", target);
		const mode = before?.type === "file" ? before.mode : (wopts.mode ?? 0o644);
		const temp = posix.join(dir, tempNameFor(posix.basename(target)));
		let committed = false;
		let created = false;
		try {
			const h = await sftpOpen(sftp, temp, "wx", mode).catch(async (e) => {
				// SFTP folds ENOTDIR and ELOOP into "no such file" and most else into "failure":
				// when the directory is the problem, say exactly what is wrong with it.
				const r = await ask(live, "k_stat", dir);
				if (r.status !== 0) throw replyError(r.out, target);
				if (parseIdentity(r.out)?.type !== "dir") throw sysError("ENOTDIR", "not a directory", target);
				throw e;
			});
			created = true;
			try {
				await fill(live, temp, h);
				await sftpFchmod(sftp, h, mode, temp); // the remote umask may have narrowed the mode
				await sftpFsync(sftp, h, temp);
			} finally {
				await sftpClose(sftp, h, temp);
			}
			await afterClose?.(temp);
			await opts.beforeCommit?.(target);
			let after: HelperReply;
			if (wopts.expect === "absent") {
				try {
					await sftpHardlink(sftp, temp, target);
				} catch (e) {
					// SFTP v3 reports EEXIST as a generic failure: look whether something is there now.
					const there = await ask(live, "k_lstat", target);
					if (there.status !== 0) throw e;
					throw writeCollision(target);
				}
				committed = true;
				after = await ask(live, "k_fin", temp, target, dir);
			} else {
				const expect = wopts.expect as Expected | undefined;
				let hash = "";
				let id = "";
				if (expect) {
					const want = identity(live, expect.stat);
					if (want === undefined) throw changed(target);
					hash = expect.sha256;
					id = want;
				}
				after = await ask(live, "k_swap", temp, target, dir, hash, id);
				if (after.out.trim() === "changed") throw changed(target);
				if (!/^moved$/m.test(after.out)) throw replyError(after.out, target);
				committed = true;
			}
			// Committed: only the new stat is missing if the rest of the script failed.
			return hasStat(after) ? statAfter(after.out, target) : await lstatOf(live, target);
		} finally {
			if (!committed) {
				if (created) await sftpUnlink(sftp, temp).catch(() => {});
				if (made) await removeEmptyDirs(sftp, dir, made);
			}
		}
	}

	return {
		realpath: (p) =>
			conn.use(async (live) => {
				const looked = live.py ? await lookFast(live, p) : undefined;
				if (looked !== undefined) return looked;
				// SFTP's realpath (no process started) is BSD's: a missing last component is not an
				// error, so existence is checked with a stat. Its failures carry no errno: ask the
				// shell's realpath -e for the exact one.
				// Both requests go out together (one round trip): a stat of `p` follows the same links.
				let resolved: string | undefined;
				const exists = sftpStat(live.sftp, p);
				exists.catch(() => {});
				try {
					resolved = await sftpRealpath(live.sftp, p);
					await exists;
				} catch (e) {
					if ((e as { code?: string }).code === "ENOENT" && resolved !== undefined) throw e;
					resolved = (await helper(live, p, "k_real", p)).replace(/\n$/, "");
				}
				return resolved;
			}),
		lstat: (p) => conn.use((live) => lstatOf(live, p)),
		stat: (p) =>
			conn.use(async (live) => live.peeks.takeStat(p) ?? statFrom(await helper(live, p, "k_stat", p), p)),
		readlink: (p) => conn.use((live) => sftpReadlink(live.sftp, p)),

		readFile: (p, expect) =>
			conn.use((live) => (live.py ? readFast(live, p, expect) : readSftp(live, p, expect))),

		readCurrent: ((p: string, maxBytes?: number) =>
			conn.use(async (live) => {
				if (live.py) return readCurrentFast(live, p, maxBytes);
				// Without python3 on the host: the stat, then the bytes checked against it (a replace
				// in between is CHANGED_ON_DISK, which an edit re-plans).
				const stat = live.peeks.takeStat(p) ?? statFrom(await helper(live, p, "k_stat", p), p);
				if (stat.type !== "file") throw swapped(p);
				if (maxBytes !== undefined && stat.size > maxBytes) return { stat, bytes: null };
				return { stat, bytes: await readSftp(live, p, stat) };
			})) as ReadCurrent,

		readdir: (p, expect) =>
			conn.use(async (live): Promise<DirEntry[]> => {
				const same = async () =>
					!expect || sameObject(statFrom(await helper(live, p, "k_stat", p), p), expect);
				const before = same();
				before.catch(() => {});
				const list = await sftpReaddir(live.sftp, p);
				if (!(await before) || !(await same())) throw swapped(p);
				return list
					.filter((e) => e.filename !== "." && e.filename !== "..")
					.map((e) => ({ name: e.filename, type: typeOfSftpMode(e.attrs.mode) }));
			}),

		mkdirp: (p) =>
			conn.use(async (live) => {
				live.peeks.clear();
				await helper(live, p, "k_mkdirp", p);
			}),

		writeFile: (target, data, wopts = {}) =>
			conn.use((live) => {
				live.peeks.clear();
				// One request for a small file; the test hook (between durable and commit) needs two.
				return live.py && !wopts.mkdirs && !opts.beforeCommit && data.byteLength <= PUT_MAX_BYTES
					? putFast(live, target, data, wopts)
					: commitVia(live, target, wopts, (l, temp, h) => writeAll(l.sftp, h, data, temp));
			}),

		copyFile: (source, target, copts) =>
			conn.use(async (live) => {
				live.peeks.clear();
				const now = await ask(live, "k_lstat", source);
				const st = now.status === 0 ? parseIdentity(now.out) : undefined;
				if (!st || !sameIdentity(st, copts.sourceStat)) throw sourceChanged(source, false);
				return commitVia(
					live,
					target,
					copts,
					async () => {},
					async (temp) => {
						const out = await helper(live, source, "k_copy", source, temp);
						if (out.split(" ")[0].trim() !== copts.sha256) throw sourceChanged(source, true);
					},
				);
			}),

		hashFile: (p) =>
			conn.use(async (live) => {
				const out = await helper(live, p, "k_hash", p);
				const hex = out.split(" ")[0].trim();
				if (!/^[0-9a-f]{64}$/.test(hex))
					throw sysError("EIO", `unexpected sha256sum output: ${out.trim()}`, p);
				return hex;
			}),

		unlink: (p, expect) =>
			conn.use(async (live) => {
				live.peeks.clear();
				let id = "";
				if (expect) {
					const want = identity(live, expect);
					if (want === undefined) throw changed(p);
					id = want;
				}
				const out = await helper(live, p, "k_rm", p, posix.dirname(p), id);
				if (out.trim() === "changed") throw changed(p);
			}),

		sweepTemps: (dir) =>
			conn.use(async (live) => {
				const r = await live.helper.request("k_sweep", dir, String(staleMinutes));
				if (r.status !== 0) return 0;
				return r.out.split("\0").length - 1;
			}),
	};
}
