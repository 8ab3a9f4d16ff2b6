/**
 * An ssh2 exec channel as a shell's pipes (shell.ts). Kept apart from shell.ts, which the container
 * backend shares, so that no public declaration reaches ssh2's types.
 */
import type { Client, ClientChannel } from "ssh2";
import { startShell } from "./remote-lib.js";
import type { ShellPipe } from "./shell.js";

export function openChannel(client: Client): Promise<ClientChannel> {
	return new Promise((resolve, reject) => {
		try {
			client.exec(startShell(), (err, chan) => (err ? reject(err) : resolve(chan)));
		} catch (e) {
			reject(e);
		}
	});
}

/** An ssh2 exec channel as a ShellPipe. */
export function channelPipe(chan: ClientChannel): ShellPipe {
	return {
		write: (text) => {
			chan.write(text);
		},
		onStdout: (fn) => chan.on("data", fn),
		onStderr: (fn) => chan.stderr.on("data", fn),
		onClose: (fn) => {
			chan.on("close", () => fn(new Error("the remote shell closed")));
			chan.on("error", (e: Error) => fn(e));
		},
		close: () => {
			chan.end();
			chan.close();
		},
	};
}
