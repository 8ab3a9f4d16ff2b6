/**
 * The protected-set scan, kept between commands (issue 12: two scans per command were 3 ms each on
 * an empty workspace, more on a real one). A scan's answer depends only on what it read: the
 * directories it listed, the paths it looked up, the git files it parsed. Each of those paths is
 * stat'ed (lstat, and stat through a link) before it is read. The next scan first stats them all
 * again: when every identity (device, inode, mode, size, mtime, ctime, in nanoseconds) is
 * unchanged, nothing the scan saw changed, so its answer still holds. Any entry added, removed or
 * renamed in a listed directory changes that directory's mtime; any rewrite of a parsed file
 * changes its ctime (which utimes cannot put back); a path looked up that appears, or now leads
 * elsewhere (a swapped ancestor, a retargeted link), has another identity, or none.
 *
 * File times tick coarsely (a few ms), so a change in the same tick as the stat can leave them
 * equal: a scan that saw anything changed within the last RACY_MS is not kept (git's "racily
 * clean" rule), and the next call scans again.
 */
import { type BigIntStats, lstatSync, statSync } from "node:fs";
import { posix } from "node:path";
import type { FileOps } from "../types.js";
import { type ProtectedScan, type ProtectOptions, scanProtected } from "./protect.js";

/** A change this recent may share its timestamp with the stat that recorded it. */
const RACY_MS = 2_000;

type Signature = string;

function identity(st: BigIntStats | undefined): string {
	if (!st) return "-";
	return `${st.dev}:${st.ino}:${st.mode}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

function statsOf(path: string): { l?: BigIntStats; s?: BigIntStats } {
	try {
		// No exceptions for what is missing (most looked-up names are): they cost more than the stat.
		const l = lstatSync(path, { bigint: true, throwIfNoEntry: false });
		return { l, s: l?.isSymbolicLink() ? statSync(path, { bigint: true, throwIfNoEntry: false }) : l };
	} catch {
		return {}; // not reachable (ENOTDIR, EACCES): recorded as absent
	}
}

/** lstat and stat of `path`, as one string ("-" for what is missing). */
function signatureOf(path: string): Signature {
	const { l, s } = statsOf(path);
	const li = identity(l);
	return `${li}|${s === l ? li : identity(s)}`;
}

/** The signature, and the latest time any of it changed (what the racy rule looks at). */
function recordOf(path: string): { sig: Signature; changedMs: number } {
	const { l, s } = statsOf(path);
	const changedNs = [l?.mtimeNs, l?.ctimeNs, s?.mtimeNs, s?.ctimeNs].reduce<bigint>(
		(a, b) => (b !== undefined && b > a ? b : a),
		0n,
	);
	const li = identity(l);
	return { sig: `${li}|${s === l ? li : identity(s)}`, changedMs: Number(changedNs / 1_000_000n) };
}

/** The paths one scan read, with what they were just before. */
export class ScanRecord {
	readonly seen = new Map<string, Signature>();
	private readonly listed = new Set<string>();
	racy = false;

	touch(path: string): void {
		const p = posix.resolve(path);
		if (this.seen.has(p)) return;
		const { sig, changedMs } = recordOf(p);
		this.seen.set(p, sig);
		if (changedMs >= Date.now() - RACY_MS) this.racy = true;
	}

	/** A directory about to be listed: its mtime then speaks for every name in it. */
	list(dir: string): void {
		this.touch(dir);
		this.listed.add(posix.resolve(dir));
	}

	/** A path whose type alone is looked at: covered by its directory when that was listed. */
	lookup(path: string): void {
		const p = posix.resolve(path);
		if (!this.listed.has(posix.dirname(p))) this.touch(p);
	}

	/** Whether every recorded path is as it was (run twice a command: only the stats and a compare). */
	unchanged(): boolean {
		for (const [p, sig] of this.seen) if (signatureOf(p) !== sig) return false;
		return true;
	}

	/** `fs` with every path it is given (and every realpath it answers) recorded first. */
	wrap(fs: FileOps): FileOps {
		return new Proxy(fs, {
			get: (target, key, receiver) => {
				const value = Reflect.get(target, key, receiver);
				if (typeof value !== "function") return value;
				return (...args: unknown[]) => {
					if (typeof args[0] === "string") this.touch(args[0]);
					const out = value.apply(target, args);
					if (key === "realpath" && out instanceof Promise) {
						return out.then((r: unknown) => {
							if (typeof r === "string") this.touch(r);
							return r;
						});
					}
					return out;
				};
			},
		});
	}
}

function keyOf(opts: ProtectOptions): string {
	return JSON.stringify([opts.roots, opts.home, opts.extra ?? []]);
}

/** One backend's kept scan (state on the runner, never module-wide). */
export class ProtectedScanCache {
	private kept: { key: string; record: ScanRecord; scan: ProtectedScan } | undefined;
	/** Scans done in full and answered from the record, for tests and the bench. */
	readonly counts = { full: 0, kept: 0 };

	async scan(opts: ProtectOptions): Promise<ProtectedScan> {
		const key = keyOf(opts);
		const kept = this.kept;
		if (kept && kept.key === key && kept.record.unchanged()) {
			this.counts.kept++;
			return kept.scan;
		}
		this.kept = undefined;
		const record = new ScanRecord();
		const scan = await scanProtected(opts, record);
		this.counts.full++;
		// Its mkdir of a missing hooks directory changed what it had recorded: the next call scans again.
		if (!record.racy && record.unchanged()) this.kept = { key, record, scan };
		return scan;
	}
}
