/**
 * Checkpoints of a remote host's files (ssh, and the containers reached the same way): the scan,
 * the store and the non-file restore steps run ON the host, in one long-lived helper
 * (src/backend/remote/host/checkpoint*.py) started through the backend's ProcessOps, so a capture
 * ships only what changed, never the tree.
 *
 * The store is a private (0700) directory of keel's state on the host, outside every root; the
 * helper keeps the latest scan in memory and on disk beside the blobs, so a helper started again
 * after a dropped connection picks up where the last one stopped (an index it cannot validate
 * means a full rescan, whose changes are not recorded). Blobs are used only when they hash to
 * their name, checked on the host and again here.
 *
 * Protocol: one JSON request per line on stdin; each answered in order by one JSON line on
 * stdout, then `size` raw bytes when the line has it (a blob).
 */
import { createHash } from "node:crypto";
import { hostProgram, joinHostFiles } from "../backend/remote/host-programs.js";
import type { ProcessOps, SpawnedProcess } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import type { CaptureResult, TreeSource } from "./source.js";
import type { CheckpointBudgets, PathChange, PathState } from "./types.js";

interface Reply {
	head: Record<string, unknown> & { ok: boolean; storeBytes?: number };
	data: Buffer;
}

/** The helper's program: the ignore rules, then the store, the scan and the request loop. */
export const checkpointHelperSource = hostProgram(() =>
	joinHostFiles(["checkpoint_ignore.py", "checkpoint_store.py", "checkpoint_scan.py", "checkpoint.py"]),
);

/** The argv that starts the helper with the host's python3. */
export function checkpointHelperArgv(): string[] {
	return ["python3", "-I", "-S", "-X", "utf8", "-u", "-c", checkpointHelperSource()];
}

/** One running helper: requests answered in order. */
class HostHelper {
	/** Output not yet handed out, and its length. */
	private chunks: Buffer[] = [];
	private held = 0;
	/** The reply line read, while its bytes are still arriving. */
	private head: Reply["head"] | undefined;
	private readonly waiting: Array<{ resolve: (r: Reply) => void; reject: (e: Error) => void }> = [];
	private stderr = "";
	dead: Error | undefined;

	constructor(private readonly proc: SpawnedProcess) {
		proc.stdout.on("data", (c: Buffer) => this.take(c));
		proc.stderr.on("data", (c: Buffer) => {
			if (this.stderr.length < 4096) this.stderr += c.toString("utf8");
		});
		void proc.exited.then((exit) => {
			const why = exit.error?.message ?? (exit.code === 127 ? "python3 was not found" : `exit ${exit.code}`);
			this.fail(
				new Error(
					`the checkpoint helper on the host stopped (${why})${this.stderr ? `: ${this.stderr.trim()}` : ""}`,
				),
			);
		});
	}

	private fail(e: Error): void {
		this.dead ??= e;
		for (const w of this.waiting.splice(0)) w.reject(this.dead);
	}

	/**
	 * Output arrives in chunks: they are joined only once a whole line, or a whole blob, is there
	 * (joining on every chunk would copy a large blob over and over).
	 */
	private take(chunk: Buffer): void {
		this.chunks.push(chunk);
		this.held += chunk.length;
		for (;;) {
			if (this.head === undefined) {
				if (chunk.indexOf(10) < 0) return;
				const all = Buffer.concat(this.chunks);
				const nl = all.indexOf(10);
				try {
					this.head = JSON.parse(all.subarray(0, nl).toString("utf8")) as Reply["head"];
				} catch {
					this.fail(new Error("the checkpoint helper on the host answered something that is not JSON"));
					this.proc.kill();
					return;
				}
				this.chunks = [all.subarray(nl + 1)];
				this.held = all.length - nl - 1;
			}
			const size = typeof this.head.size === "number" ? this.head.size : 0;
			if (this.held < size) return;
			const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
			const reply = { head: this.head, data: Buffer.from(all.subarray(0, size)) };
			this.head = undefined;
			chunk = all.subarray(size);
			this.chunks = [chunk];
			this.held = chunk.length;
			this.waiting.shift()?.resolve(reply);
		}
	}

	request(req: Record<string, unknown>): Promise<Reply> {
		if (this.dead) return Promise.reject(this.dead);
		return new Promise<Reply>((resolve, reject) => {
			this.waiting.push({ resolve, reject });
			this.proc.stdin?.write(`${JSON.stringify(req)}\n`);
		});
	}

	kill(): void {
		this.proc.kill();
	}
}

export class RemoteTreeSource implements TreeSource {
	private helper: HostHelper | undefined;
	private starting: Promise<HostHelper> | undefined;
	/** The store's name on the host, reused by a helper started again after a drop. */
	private storeName: string | undefined;
	private bytes = 0;

	private constructor(
		readonly roots: readonly string[],
		private readonly processes: ProcessOps,
		private readonly budgets: CheckpointBudgets,
	) {}

	/** Start the helper and open a new store on the host; throws BACKEND_UNAVAILABLE when it cannot. */
	static async open(
		processes: ProcessOps,
		roots: readonly string[],
		budgets: CheckpointBudgets,
	): Promise<RemoteTreeSource> {
		const outer = roots.filter((r, i, all) => !all.some((o, j) => j !== i && r.startsWith(`${o}/`)));
		const source = new RemoteTreeSource(outer, processes, budgets);
		await source.running();
		return source;
	}

	/** The helper, started (again) when there is none alive. */
	private running(): Promise<HostHelper> {
		if (this.helper && !this.helper.dead) return Promise.resolve(this.helper);
		this.starting ??= this.start().finally(() => {
			this.starting = undefined;
		});
		return this.starting;
	}

	private async start(): Promise<HostHelper> {
		await this.processes.ready();
		const open = async (store: string | undefined) => {
			const helper = new HostHelper(
				this.processes.spawn({ argv: checkpointHelperArgv(), cwd: this.roots[0] }),
			);
			const r = await helper.request({
				op: "open",
				roots: this.roots,
				maxFileBytes: this.budgets.maxFileBytes,
				maxEntries: this.budgets.maxEntries,
				store: store ?? null,
			});
			if (!r.head.ok) helper.kill();
			return { helper, r };
		};
		let opened: Awaited<ReturnType<typeof open>>;
		try {
			opened = await open(this.storeName);
			// The old store is still held (its helper not yet gone): start a new one.
			if (!opened.r.head.ok && this.storeName) opened = await open(undefined);
		} catch (e) {
			throw new KeelError(
				"BACKEND_UNAVAILABLE",
				`Checkpoints on this backend need python3 on the host: ${(e as Error).message}`,
				{ cause: e },
			);
		}
		if (!opened.r.head.ok)
			throw new KeelError(
				"BACKEND_UNAVAILABLE",
				`Checkpoints cannot keep a store on the host: ${opened.r.head.message}`,
			);
		this.storeName = String(opened.r.head.store);
		this.bytes = Number(opened.r.head.storeBytes ?? 0);
		this.helper = opened.helper;
		return opened.helper;
	}

	/**
	 * One request; a failure the helper reports becomes an Error with its errno-style code. A
	 * request that only reads or scans is sent once more to a new helper when the one it went to
	 * died (a dropped connection); a restore step is not, as it may have been done.
	 */
	private async ask(req: Record<string, unknown>, again = false): Promise<Reply> {
		const helper = await this.running();
		let r: Reply;
		try {
			r = await helper.request(req);
		} catch (e) {
			if (!again || !helper.dead) throw e;
			r = await (await this.running()).request(req);
		}
		if (typeof r.head.storeBytes === "number") this.bytes = r.head.storeBytes;
		if (!r.head.ok) {
			const e = new Error(String(r.head.message)) as NodeJS.ErrnoException;
			e.code = String(r.head.code);
			throw e;
		}
		return r;
	}

	async capture(room: number): Promise<CaptureResult> {
		const { head } = await this.ask({ op: "capture", room }, true);
		const changes = (head.changes as Array<[string, PathState, PathState]>).map(
			([path, before, after]): PathChange => ({ path, before, after }),
		);
		return {
			changes,
			leftOut: head.leftOut as string[],
			leftOutCount: head.leftOutCount as number,
			identityOnly: head.identityOnly as string[],
			truncated: head.truncated === true,
		};
	}

	storeBytes(): number {
		return this.bytes;
	}

	async blob(sha256: string): Promise<Buffer | null> {
		const { head, data } = await this.ask({ op: "blob", sha256 }, true);
		if (head.found !== true) return null;
		return createHash("sha256").update(data).digest("hex") === sha256 ? data : null;
	}

	async retain(keep: ReadonlySet<string>): Promise<void> {
		await this.ask({ op: "retain", keep: [...keep] }, true);
	}

	async makeDir(path: string, mode: number): Promise<void> {
		await this.ask({ op: "makeDir", path, mode });
	}

	async makeLink(path: string, target: string): Promise<void> {
		await this.ask({ op: "makeLink", path, target });
	}

	async setMode(path: string, mode: number): Promise<void> {
		await this.ask({ op: "setMode", path, mode });
	}

	async removeDir(path: string): Promise<void> {
		await this.ask({ op: "removeDir", path });
	}

	async close(): Promise<void> {
		const helper = this.helper;
		if (!helper || helper.dead) return;
		try {
			await helper.request({ op: "close" });
		} catch {
			// The connection is gone: the store is swept by a later helper once it is stale.
		} finally {
			helper.kill();
			this.bytes = 0;
		}
	}
}
