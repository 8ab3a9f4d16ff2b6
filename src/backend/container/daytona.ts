/**
 * keel on a Daytona sandbox (`@daytonaio/sdk`, typed against 0.218.0; not imported: you pass your
 * own `Sandbox`). Daytona's long-lived primitive is a session: `process.createSession(id)`, then
 * `executeSessionCommand(id, { command, runAsync: true, suppressInputEcho: true })` → cmdId,
 * output through `getSessionCommandLogs(id, cmdId, onStdout, onStderr)` (decoded strings, streamed
 * until the command ends), input through `sendSessionCommandInput(id, cmdId, data: string)`, the
 * exit code from `getSessionCommand`. There is no stdin close and no per-command kill: keel gives
 * each process its own session and kills it by `deleteSession`; input and output go through
 * sdk-process.ts's base64 WRAPPER (a "." line ends the program's stdin). Persistent shells and
 * python work. (`process.executeCommand` alone would be one HTTP call per operation, no stdin.)
 */
import { randomBytes } from "node:crypto";
import { shq } from "../shell-quote.js";
import { type SdkBackend, type SdkBackendOptions, sdkBackend } from "./sdk-backend.js";
import type { SdkLauncher } from "./sdk-process.js";

/** What keel uses of Daytona's `Process` (sandbox.process). */
export interface DaytonaProcess {
	/** Open a shell session. */
	createSession(sessionId: string): Promise<void>;
	/** Start a command in a session. */
	executeSessionCommand(
		sessionId: string,
		req: { command: string; runAsync?: boolean; suppressInputEcho?: boolean },
	): Promise<{ cmdId: string }>;
	/** Follow a command's output. */
	getSessionCommandLogs(
		sessionId: string,
		commandId: string,
		onStdout: (chunk: string) => void,
		onStderr: (chunk: string) => void,
	): Promise<void>;
	/** A command's state (its exit code once it ended). */
	getSessionCommand(sessionId: string, commandId: string): Promise<{ exitCode?: number }>;
	/** Write to a command's stdin. */
	sendSessionCommandInput(sessionId: string, commandId: string, data: string): Promise<void>;
	/** Close a shell session. */
	deleteSession(sessionId: string): Promise<void>;
}

/** What keel uses of Daytona's `Sandbox`. */
export interface DaytonaSandbox {
	readonly id?: string;
	readonly process: DaytonaProcess;
}

/** How keel starts its host helper in a Daytona sandbox. */
export function daytonaLauncher(sandbox: DaytonaSandbox): SdkLauncher {
	const p = sandbox.process;
	return {
		label: `Daytona sandbox${sandbox.id ? ` ${sandbox.id}` : ""}`,
		encoding: "text",
		stdin: true,
		async start(argv, out, opts) {
			const session = `keel-${randomBytes(8).toString("hex")}`;
			await p.createSession(session);
			const env = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`);
			const words = env.length > 0 ? ["env", ...env, ...argv] : argv;
			let gone = false;
			const remove = async () => {
				if (gone) return;
				gone = true;
				await p.deleteSession(session).catch(() => {});
			};
			let cmdId: string;
			try {
				({ cmdId } = await p.executeSessionCommand(session, {
					command: words.map(shq).join(" "),
					runAsync: true,
					suppressInputEcho: true,
				}));
			} catch (e) {
				await remove();
				throw e;
			}
			const done = p
				.getSessionCommandLogs(session, cmdId, out.stdout, out.stderr)
				.then(() => (gone ? null : p.getSessionCommand(session, cmdId).then((c) => c.exitCode ?? null)))
				.finally(remove);
			return {
				write: (data) =>
					p.sendSessionCommandInput(
						session,
						cmdId,
						typeof data === "string" ? data : Buffer.from(data).toString("utf8"),
					),
				closeStdin: async () => {}, // text launcher: end of input is WRAPPER's "." line
				kill: remove,
				done,
			};
		},
	};
}

/** keel's backend on a Daytona sandbox: persistent shells (one session each), files, commands, search, python. */
export function createDaytonaBackend(sandbox: DaytonaSandbox, opts: SdkBackendOptions = {}): SdkBackend {
	return sdkBackend(daytonaLauncher(sandbox), { kind: "daytona", ...opts });
}

export type { SdkBackend, SdkBackendOptions } from "./sdk-backend.js";
