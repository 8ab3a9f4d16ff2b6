/**
 * keel on a Modal sandbox (`modal` npm package, Modal's JS SDK, typed against 0.11.1; not
 * imported: you pass your own `Sandbox`). Modal's primitive is `sandbox.exec(argv, { mode:
 * "binary" })`: a ContainerProcess whose stdin is a WritableStream and stdout/stderr ReadableStreams
 * of bytes, `wait()` the exit code. An argv with byte streams: the closest to `podman exec -i`, so
 * no wrapper; persistent shells and python work. There is no kill for one process (only
 * `terminate()` of the whole sandbox): an abort closes the process's stdin, and keel kills command
 * groups itself through another shell, as on the container backend.
 */
import { type SdkBackend, type SdkBackendOptions, sdkBackend } from "./sdk-backend.js";
import type { SdkLauncher } from "./sdk-process.js";

/** What keel uses of Modal's `ContainerProcess<Uint8Array>`. */
export interface ModalContainerProcess {
	stdin: WritableStream<Uint8Array>;
	stdout: ReadableStream<Uint8Array>;
	stderr: ReadableStream<Uint8Array>;
	/** The exit code, once it ended. */
	wait(): Promise<number>;
}

/** What keel uses of Modal's `Sandbox`. */
export interface ModalSandbox {
	readonly sandboxId?: string;
	/** Start a command. */
	exec(
		command: string[],
		params: { mode: "binary"; env?: Record<string, string>; stdout?: "pipe"; stderr?: "pipe" },
	): Promise<ModalContainerProcess>;
}

async function drain(stream: ReadableStream<Uint8Array>, onChunk: (c: Uint8Array) => void): Promise<void> {
	const reader = stream.getReader();
	for (;;) {
		const { done, value } = await reader.read();
		if (done) return;
		if (value && value.length > 0) onChunk(value);
	}
}

/** How keel starts its host helper in a Modal sandbox. */
export function modalLauncher(sandbox: ModalSandbox): SdkLauncher {
	return {
		label: `Modal sandbox${sandbox.sandboxId ? ` ${sandbox.sandboxId}` : ""}`,
		encoding: "binary",
		stdin: true,
		async start(argv, out, opts) {
			const proc = await sandbox.exec(argv, {
				mode: "binary",
				env: opts.env,
				stdout: "pipe",
				stderr: "pipe",
			});
			const writer = proc.stdin.getWriter();
			let closed = false;
			const closeStdin = async () => {
				if (closed) return;
				closed = true;
				await writer.close();
			};
			if (!opts.stdin) await closeStdin();
			const drained = Promise.all([drain(proc.stdout, out.stdout), drain(proc.stderr, out.stderr)]);
			return {
				write: (data) => writer.write(typeof data === "string" ? new TextEncoder().encode(data) : data),
				closeStdin,
				kill: closeStdin, // Modal has no per-process kill
				done: Promise.all([proc.wait(), drained]).then(([code]) => code),
			};
		},
	};
}

/** keel's backend on a Modal sandbox: persistent shells, files, commands, search, python. */
export function createModalBackend(sandbox: ModalSandbox, opts: SdkBackendOptions = {}): SdkBackend {
	return sdkBackend(modalLauncher(sandbox), { kind: "modal", ...opts });
}

export type { SdkBackend, SdkBackendOptions } from "./sdk-backend.js";
