/**
 * The long-lived sandboxes of one runner (state on the runner, never module-wide). A command takes
 * an idle sandbox built with the same options (the protected set mounted as the latest scan found
 * it) or starts one; it goes back idle afterwards only if the server inside reported everything
 * clean. Concurrent commands get sandboxes of their own, so one command's end-of-call kill never
 * reaches another's processes. When the server cannot run here (no /usr/bin/python3, prctl
 * refused), the runner falls back to one bwrap per command.
 */
import { existsSync } from "node:fs";
import type { ExecResult } from "../types.js";
import type { LaunchPlan } from "./launch.js";
import { NotStarted, SandboxServer, SERVER_PYTHON } from "./server.js";
import type { ServerRunRequest } from "./server-protocol.js";

/** Idle sandboxes kept for the next command (more are started when commands run concurrently). */
const MAX_IDLE = 2;
/** Emptied after every command, unless a bind is there (a root at /tmp is the user's). */
const SCRATCH_DIRS = ["/tmp", "/dev/shm"];

function within(parent: string, child: string): boolean {
	return child === parent || child.startsWith(parent === "/" ? "/" : `${parent}/`);
}

export class ServerPool {
	private readonly idle: SandboxServer[] = [];
	private readonly live = new Set<SandboxServer>();
	private unavailable = !existsSync(SERVER_PYTHON);
	/** Sandboxes started, for tests and the bench. */
	started = 0;

	get usable(): boolean {
		return !this.unavailable;
	}

	/** Runs through a long-lived sandbox; undefined when the server cannot run here (use one bwrap per command). */
	async run(
		bwrap: string,
		plan: LaunchPlan,
		bound: readonly string[],
		req: ServerRunRequest,
	): Promise<ExecResult | undefined> {
		try {
			return await this.runOnce(bwrap, plan, bound, req);
		} catch (e) {
			// An idle sandbox that died (killed from the host) before taking the command: nothing ran.
			if (!(e instanceof NotStarted)) throw e;
			return this.runOnce(bwrap, plan, bound, req);
		}
	}

	private async runOnce(
		bwrap: string,
		plan: LaunchPlan,
		bound: readonly string[],
		req: ServerRunRequest,
	): Promise<ExecResult | undefined> {
		const key = plan.key;
		let server: SandboxServer | undefined;
		while (!server && this.idle.length > 0) {
			const s = this.idle.pop() as SandboxServer;
			if (s.healthy && s.key === key) server = s;
			else this.retire(s);
		}
		if (!server) {
			server = await this.launch(
				bwrap,
				plan,
				SCRATCH_DIRS.filter((d) => !bound.some((b) => within(b, d))),
			);
			if (!server) return undefined;
		}
		try {
			return await server.run(req);
		} finally {
			if (server.healthy && this.idle.length < MAX_IDLE) this.idle.push(server);
			else this.retire(server);
		}
	}

	/**
	 * A sandbox of its own for one process handle: never idle, never shared (its command's end
	 * kills it), killed by close() with the rest. Undefined when the server cannot run here.
	 */
	async own(bwrap: string, plan: LaunchPlan): Promise<SandboxServer | undefined> {
		if (this.unavailable) return undefined;
		// Nothing is emptied: the sandbox, its /tmp with it, goes when the command ends.
		return this.launch(bwrap, plan, []);
	}

	/** A new sandbox with its server ready; undefined (and no more tries) when it cannot start. */
	private async launch(
		bwrap: string,
		plan: LaunchPlan,
		emptied: readonly string[],
	): Promise<SandboxServer | undefined> {
		const server = new SandboxServer(bwrap, plan, emptied);
		this.live.add(server);
		void server.exited.then(() => this.live.delete(server));
		this.started++;
		try {
			await server.ready();
			return server;
		} catch {
			this.retire(server);
			this.unavailable = true;
			return undefined;
		}
	}

	/** Kills every sandbox (the backend's close). */
	close(): void {
		for (const s of this.live) s.kill();
		this.idle.length = 0;
	}

	private retire(s: SandboxServer): void {
		s.kill();
		this.live.delete(s);
	}
}
