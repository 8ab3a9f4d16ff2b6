/**
 * A sandbox SDK with a text-only channel (E2B, Daytona): keel's persistent shell there runs under
 * sdk_wrapper.sh, whose mode i relays every byte as base64 lines. Where python3 exists one
 * process relays the whole run (host/sdk_relay.py); where it does not, sh starts a dd and a base64
 * per chunk out and a head and a base64 per line in. Both sides run keel's E2B backend on the same
 * local process launcher (E2B's command shape: `/bin/sh -c CMD`, stdin, output as strings); the sh
 * side's launcher gets a PATH without python3. The floor is keel's local backend: the same tool
 * calls with no channel at all.
 *
 * Run alone: `npm run build && node bench/sdk-relay.mjs [--quick] [--iterations=N]`.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createE2bBackend } from "../dist/backend/container/e2b.js";
import { createSession } from "../dist/index.js";
import { assert, FLOOR, runAreaStandalone, smallText, textOf, toggler } from "./lib.mjs";

export const area = "sdk-relay";
export const title = "text-only SDK channel (E2B's shape): the python3 relay vs the sh relay";
export const candidate = "python3 relay";
export const baseline = "sh relay";

/** E2B's `commands.run` on this machine: strings out, stdin when asked, the exit code from wait(). */
function localSandbox(path) {
	return {
		sandboxId: "bench",
		commands: {
			async run(cmd, opts) {
				const child = spawn("/bin/sh", ["-c", cmd], {
					stdio: [opts.stdin ? "pipe" : "ignore", "pipe", "pipe"],
					env: { PATH: path, HOME: "/tmp", ...opts.envs },
				});
				child.stdout.setEncoding("utf8").on("data", (s) => opts.onStdout?.(s));
				child.stderr.setEncoding("utf8").on("data", (s) => opts.onStderr?.(s));
				child.stdin?.on("error", () => {});
				const exit = new Promise((r) => child.on("close", (code) => r(code ?? 137)));
				return {
					pid: child.pid ?? -1,
					sendStdin: (data) => new Promise((r, j) => child.stdin.write(data, (e) => (e ? j(e) : r()))),
					closeStdin: async () => child.stdin.end(),
					kill: async () => child.kill("SIGKILL"),
					async wait() {
						const exitCode = await exit;
						if (exitCode !== 0) throw Object.assign(new Error(`exit ${exitCode}`), { exitCode });
						return { exitCode };
					},
				};
			},
		},
	};
}

/** A directory of links to every program in /usr/bin and /bin except python's. */
function pathWithoutPython(dir) {
	const bin = join(dir, "bin-no-python");
	mkdirSync(bin);
	for (const from of ["/usr/bin", "/bin"]) {
		for (const name of readdirSync(from)) {
			if (name.startsWith("python") || existsSync(join(bin, name))) continue;
			symlinkSync(join(from, name), join(bin, name));
		}
	}
	return bin;
}

export async function setup({ dir }) {
	const root = join(dir, "root");
	mkdirSync(root);
	const small = smallText();
	const files = ["read.txt", "edit-py.txt", "edit-sh.txt", "edit-local.txt"];
	for (const f of files) writeFileSync(join(root, f), small);
	const withPython = `/usr/bin:/bin`;
	const withoutPython = pathWithoutPython(dir);
	assert(
		spawnSync("sh", ["-c", "command -v python3"], { env: { PATH: withPython } }).status === 0,
		"python3 in /usr/bin",
	);
	const open = (backend) => createSession({ root, backend, spillDir: join(dir, `spill-${Math.random()}`) });
	const sessions = {
		py: await open(createE2bBackend(localSandbox(withPython))),
		sh: await open(createE2bBackend(localSandbox(withoutPython))),
		local: await open(undefined),
	};
	const call = (s, tool, args) => async () => {
		const r = await sessions[s].call(tool, args);
		if (!r.ok) throw new Error(`${s} ${tool} failed: ${r.error.code}: ${r.error.message}`);
		return r;
	};
	const edits = { py: toggler(), sh: toggler(), local: toggler() };
	const edit = (s) => () =>
		call(s, "edit", { path: `edit-${s === "py" ? "py" : s}.txt`, edits: [edits[s]()] })();
	const three = (make) => [
		{ label: candidate, run: make("py") },
		{ label: baseline, run: make("sh") },
		{ label: FLOOR, floor: true, run: make("local") },
	];
	const cases = [
		{
			name: "read, small file (2 KB)",
			iterations: 40,
			warmup: 3,
			async check() {
				for (const s of ["py", "sh"]) {
					const text = textOf(await call(s, "read", { path: "read.txt" })());
					assert(text === small.replace(/\n$/, ""), `${s}: read gave other text`);
				}
			},
			contenders: three((s) => call(s, "read", { path: "read.txt" })),
		},
		{ name: "edit, one change in the small file", iterations: 40, warmup: 3, contenders: three(edit) },
		{
			name: "bash, `echo hello`",
			iterations: 40,
			warmup: 3,
			contenders: three((s) => call(s, "bash", { command: "echo hello" })),
		},
	];
	return {
		cases,
		async teardown() {
			for (const s of Object.values(sessions)) await s.close();
		},
	};
}

// Standalone: node bench/sdk-relay.mjs [--quick]
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	await runAreaStandalone({ area, title, candidate, baseline, setup });
}
