/**
 * A real ExecTransport over the OpenSSH client against the test sshd (test/fixtures/sshd.ts): one
 * `ssh host -- 'quoted argv'` per call, multiplexed over a master connection (ControlMaster) so a
 * call does not pay a handshake. Each call still starts the remote user's shell (sshd runs
 * `$SHELL -c`), which reads its rc files unless the server says otherwise (backends.ts does).
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { ExecTransport } from "../../src/backend/exec/transport.js";
import { runInGroup } from "../../src/backend/run-group.js";
import type { Sshd } from "../fixtures/sshd.js";

/** One word for a POSIX shell, whatever bytes it holds (sshd hands the command line to the user's shell). */
export function shQuote(s: string): string {
	return `'${s.replaceAll("'", `'\\''`)}'`;
}

export interface SshTransport extends ExecTransport {
	/** Stop the master connection. */
	close(): void;
}

export function sshTransport(sshd: Sshd): SshTransport {
	const options = [
		"-i",
		sshd.keyPath,
		"-p",
		String(sshd.port),
		"-o",
		"BatchMode=yes",
		"-o",
		`UserKnownHostsFile=${sshd.knownHostsPath}`,
		"-o",
		"StrictHostKeyChecking=yes",
		"-o",
		"LogLevel=ERROR",
		"-o",
		`ControlPath=${join(sshd.dir, "cm-%C")}`,
		"-T",
	];
	const host = `${sshd.username}@${sshd.host}`;
	// -f: the master goes to the background once authenticated; stdio ignored so nothing waits on it.
	const master = spawnSync("ssh", [...options, "-M", "-N", "-f", host], { stdio: "ignore", timeout: 30_000 });
	if (master.status !== 0)
		throw new Error(`could not start the ssh master connection (exit ${master.status})`);
	const transport: ExecTransport = async (argv, o) => {
		const r = await runInGroup({
			argv: ["ssh", ...options, "-o", "ControlMaster=no", host, "--", argv.map(shQuote).join(" ")],
			stdin: o.stdin,
			signal: o.signal,
			onData: (chunk, stream) => o.onData?.(chunk, stream),
		});
		return { exitCode: r.aborted ? null : r.exitCode };
	};
	return Object.assign(transport, {
		close() {
			spawnSync("ssh", [...options, "-O", "exit", host], { stdio: "ignore", timeout: 10_000 });
		},
	});
}
