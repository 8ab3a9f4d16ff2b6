/**
 * ~/.ssh/config for the ssh backend (client-config.ts): `ssh://devbox/...` reaches the host a
 * `Host devbox` entry names, as `ssh devbox` would. Against the real sshd of test/fixtures/sshd.ts,
 * the resolver against OpenSSH's own `ssh -G`, and the CLI with HOME pointing at a temp home.
 */
import { execFile, execFileSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resolveSshTarget } from "../../src/backend/ssh/client-config.js";
import { createSshBackend, type SshBackend, type SshBackendOptions } from "../../src/backend/ssh/index.js";
import { freePort, NO_RC_FILES, type Sshd, sshdMissing, startSshd } from "../fixtures/sshd.js";

const missing = sshdMissing();
const BIN = join(import.meta.dirname, "../../bin/keel.js");

function hasSshClient(): boolean {
	try {
		execFileSync("ssh", ["-V"], { stdio: "ignore" });
		return true;
	} catch {
		return false;
	}
}

async function caught(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
	try {
		await promise;
	} catch (e) {
		return e as { code?: string; message: string };
	}
	throw new Error("expected a rejection");
}

describe.skipIf(missing)(
	`the ssh backend reads ~/.ssh/config${missing ? ` (skipped: ${missing})` : ""}`,
	() => {
		let sshd: Sshd;
		let dir: string;
		let config: string;
		let otherKey: string;
		const opened: SshBackend[] = [];

		beforeAll(async () => {
			sshd = await startSshd(NO_RC_FILES);
			dir = await mkdtemp(join(tmpdir(), "keel-ssh-config-"));
			config = join(dir, "config");
			otherKey = join(dir, "other_ed25519");
			// A key the server does not accept.
			execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "not-authorized", "-f", otherKey], {
				stdio: "ignore",
			});
		}, 60_000);
		afterAll(async () => {
			await sshd?.stop();
			if (dir) await rm(dir, { recursive: true, force: true });
		});
		afterEach(async () => {
			await Promise.all(opened.splice(0).map((b) => b.close()));
		});

		const devbox = () =>
			[
				"Host devbox",
				"  HostName 127.0.0.1",
				`  Port ${sshd.port}`,
				`  User ${sshd.username}`,
				`  IdentityFile ${sshd.keyPath}`,
			].join("\n");

		function backend(opts: Partial<SshBackendOptions> = {}): SshBackend {
			const b = createSshBackend({
				host: "devbox",
				sshConfigFile: config,
				knownHostsFile: sshd.knownHostsPath,
				agent: false,
				connectTimeoutMs: 10_000,
				...opts,
			});
			opened.push(b);
			return b;
		}

		async function run(b: SshBackend, command: string): Promise<string> {
			let out = "";
			const r = await b.exec.run({ command, cwd: "/", onData: (c) => (out += c) });
			expect(r.exitCode).toBe(0);
			return out;
		}

		it("connects to a Host alias with the file's HostName, Port, User and IdentityFile", async () => {
			await writeFile(config, `${devbox()}\n`);
			const b = backend();
			expect(b.target).toBe(`devbox (${sshd.username}@127.0.0.1:${sshd.port})`);
			expect(await run(b, "echo via-alias; id -un")).toBe(`via-alias\n${sshd.username}\n`);
		});

		it("explicit port, user and identity win over the file", async () => {
			const refused = await freePort();
			await writeFile(
				config,
				[
					"Host devbox",
					"  HostName 127.0.0.1",
					`  Port ${refused}`,
					"  User keel-nobody",
					`  IdentityFile ${otherKey}`,
					"",
				].join("\n"),
			);
			// The file alone: its port (nothing listens) and, on the right port, its key (refused).
			const e = await caught(backend().connect());
			expect(e.code).toBe("BACKEND_UNAVAILABLE");
			expect(e.message).toContain(`devbox (keel-nobody@127.0.0.1:${refused})`);
			expect(e.message).toContain("connection refused");
			const e2 = await caught(backend({ port: sshd.port, username: sshd.username }).connect());
			expect(e2.message).toMatch(/Authentication .* failed/);
			expect(e2.message).toContain(otherKey);
			// Explicit values: the right port, user and key.
			const b = backend({ port: sshd.port, username: sshd.username, identityFile: sshd.keyPath });
			expect(await run(b, "echo explicit")).toBe("explicit\n");
		});

		it("sshConfigFile: false reads no file: devbox is then just an unknown host name", async () => {
			await writeFile(config, `${devbox()}\n`);
			const e = await caught(backend({ sshConfigFile: false, identityFile: sshd.keyPath }).connect());
			expect(e.code).toBe("BACKEND_UNAVAILABLE");
			expect(e.message).toContain("devbox");
			expect(e.message).not.toContain(String(sshd.port));
		});

		it("a missing configuration file is no error", async () => {
			const b = backend({
				host: "127.0.0.1",
				port: sshd.port,
				username: sshd.username,
				identityFile: sshd.keyPath,
				sshConfigFile: join(dir, "no-such-config"),
			});
			expect(b.target).toBe(`${sshd.username}@127.0.0.1:${sshd.port}`);
			expect(await run(b, "echo ok")).toBe("ok\n");
		});

		it("a later `Host *` entry does not override the specific entry's values (first value wins)", async () => {
			await writeFile(
				config,
				[
					devbox(),
					"",
					"Host *",
					"  HostName 192.0.2.1",
					"  Port 1",
					"  User keel-nobody",
					`  IdentityFile ${otherKey}`,
					"",
				].join("\n"),
			);
			const b = backend();
			expect(b.target).toBe(`devbox (${sshd.username}@127.0.0.1:${sshd.port})`);
			expect(await run(b, "echo first-wins")).toBe("first-wins\n");
		});

		it("a malformed file is BACKEND_UNAVAILABLE naming the file and line, not a crash", async () => {
			await writeFile(config, `# keel test\n${devbox()}\n  IdentityFile "${sshd.keyPath}\n`);
			const b = backend();
			const e = await caught(b.connect());
			expect(e.code).toBe("BACKEND_UNAVAILABLE");
			expect(e.message).toContain(`${config} cannot be parsed at line 7`);
			await writeFile(config, `Host devbox\n  Port twenty-two\n`);
			const e2 = await caught(backend().connect());
			expect(e2.code).toBe("BACKEND_UNAVAILABLE");
			expect(e2.message).toContain(`${config} line 2: bad Port "twenty-two"`);
		});

		it("known_hosts is looked up under the resolved [host]:port, never the alias", async () => {
			await writeFile(config, `${devbox()}\n`);
			const kh = join(dir, "kh-alias");
			// A key recorded under the alias is not the resolved host's (ssh does not match it either).
			await writeFile(kh, `devbox ${sshd.hostKeyPublic}\n`);
			const e = await caught(backend({ knownHostsFile: kh }).connect());
			expect(e.code).toBe("BACKEND_UNAVAILABLE");
			expect(e.message).toContain(`The host key of devbox ([127.0.0.1]:${sshd.port}) is not in ${kh}`);
			expect(e.message).toContain(`ssh-keyscan -p ${sshd.port} 127.0.0.1 >> ${kh}`);
			// Recorded as ssh records it for that host and port: accepted.
			await writeFile(kh, `[127.0.0.1]:${sshd.port} ${sshd.hostKeyPublic}\n`);
			expect(await run(backend({ knownHostsFile: kh }), "echo known")).toBe("known\n");
		});

		it("UserKnownHostsFile (with tokens) and HostKeyAlias from the file", async () => {
			const khDir = join(dir, "kh.d");
			await mkdir(khDir, { recursive: true });
			await writeFile(
				join(khDir, `${sshd.username}@devbox`),
				`[127.0.0.1]:${sshd.port} ${sshd.hostKeyPublic}\n`,
			);
			await writeFile(config, `${devbox()}\n  UserKnownHostsFile ${khDir}/%r@%n\n`);
			expect(await run(backend({ knownHostsFile: undefined }), "echo from-config")).toBe("from-config\n");

			const aliased = join(dir, "kh-aliased");
			await writeFile(config, `${devbox()}\n  HostKeyAlias devbox.keel\n  UserKnownHostsFile ${aliased}\n`);
			await writeFile(aliased, `devbox.keel ${sshd.hostKeyPublic}\n`);
			expect(await run(backend({ knownHostsFile: undefined }), "echo alias-key")).toBe("alias-key\n");
			// The alias's entry is the one checked: another key there is a mismatch.
			const other = (await readFile(`${otherKey}.pub`, "utf8")).split(" ").slice(0, 2).join(" ");
			await writeFile(aliased, `devbox.keel ${other}\n`);
			const e = await caught(backend({ knownHostsFile: undefined }).connect());
			expect(e.message).toContain("HOST KEY MISMATCH for devbox (devbox.keel)");
			expect(e.message).toContain(`${aliased}:1`);
		});

		it("IdentityFile: ~, %d, %u, %r, %h and %p expand; the first file that exists is offered", async () => {
			const home = await mkdtemp(join(tmpdir(), "keel-ssh-home-"));
			const keyDir = join(home, ".ssh", "keys", userInfo().username);
			await mkdir(keyDir, { recursive: true });
			await copyFile(sshd.keyPath, join(keyDir, `${sshd.username}@127.0.0.1:${sshd.port}`));
			await writeFile(
				config,
				[
					"Host devbox",
					"  HostName 127.0.0.1",
					`  Port ${sshd.port}`,
					`  User ${sshd.username}`,
					"  IdentityFile ~/.ssh/no_such_key",
					"  IdentityFile %d/.ssh/keys/%u/%r@%h:%p",
					"",
				].join("\n"),
			);
			const saved = process.env.HOME;
			process.env.HOME = home;
			try {
				expect(await run(backend(), "echo tokens")).toBe("tokens\n");
			} finally {
				process.env.HOME = saved;
				await rm(home, { recursive: true, force: true });
			}
		});

		it("Include (a glob) brings in Host entries", async () => {
			const confD = join(dir, "conf.d");
			await mkdir(confD, { recursive: true });
			await writeFile(join(confD, "10-devbox.conf"), `${devbox()}\n`);
			await writeFile(config, `Include ${confD}/*.conf\n\nHost *\n  Port 1\n`);
			const b = backend();
			expect(b.target).toBe(`devbox (${sshd.username}@127.0.0.1:${sshd.port})`);
			expect(await run(b, "echo included")).toBe("included\n");
		});

		it("Match exec is never run; a Match block keel cannot decide refuses only when it would set a value", async () => {
			const marker = join(dir, "match-exec-ran");
			await writeFile(
				config,
				[`Match exec "touch ${marker}"`, "  ForwardAgent yes", "  Compression yes", devbox(), ""].join("\n"),
			);
			expect(await run(backend(), "echo ignored")).toBe("ignored\n");
			await writeFile(config, [`Match exec "touch ${marker}"`, "  Port 2200", devbox(), ""].join("\n"));
			const e = await caught(backend().connect());
			expect(e.code).toBe("BACKEND_UNAVAILABLE");
			expect(e.message).toContain(
				`${config} line 2: Port is set inside "Match exec touch ${marker}" (${config} line 1)`,
			);
			// An explicit port decides it.
			expect(await run(backend({ port: sshd.port }), "echo explicit")).toBe("explicit\n");
			await expect(readFile(marker)).rejects.toMatchObject({ code: "ENOENT" });
		});

		it("ProxyJump is not followed: keel connects directly and says so when that fails", async () => {
			const refused = await freePort();
			await writeFile(config, `${devbox()}\n  ProxyJump bastion.invalid\n`);
			expect(await run(backend(), "echo direct")).toBe("direct\n");
			await writeFile(
				config,
				`${devbox().replace(`Port ${sshd.port}`, `Port ${refused}`)}\n  ProxyJump bastion.invalid\n`,
			);
			const e = await caught(backend().connect());
			expect(e.message).toContain("connection refused");
			expect(e.message).toContain(`${config} line 6 sets ProxyJump bastion.invalid, which keel ignores`);
		});

		describe("keel call --backend ssh://devbox/DIR (the built CLI)", () => {
			it("resolves the alias from $HOME/.ssh/config and checks $HOME/.ssh/known_hosts", async () => {
				const home = await mkdtemp(join(tmpdir(), "keel-ssh-home-"));
				const work = await mkdtemp(join(tmpdir(), "keel-ssh-config-cli-"));
				try {
					await mkdir(join(home, ".ssh"), { mode: 0o700 });
					await copyFile(sshd.keyPath, join(home, ".ssh", "id_devbox"));
					await writeFile(
						join(home, ".ssh", "config"),
						[
							"Host devbox",
							"  HostName 127.0.0.1",
							`  Port ${sshd.port}`,
							`  User ${sshd.username}`,
							"  IdentityFile ~/.ssh/id_devbox",
							"",
						].join("\n"),
					);
					await writeFile(join(work, "remote.txt"), "over the alias\n");
					const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
					delete env.SSH_AUTH_SOCK;
					const keel = (args: string[]) =>
						new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
							execFile("node", [BIN, ...args], { env }, (err, stdout, stderr) => {
								resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
							});
						});
					const args = ["call", "read", `{"path":"remote.txt"}`, "--backend", `ssh://devbox${work}`];
					// No known_hosts entry yet: refused, naming the alias and the resolved host.
					const unknown = await keel(args);
					expect(unknown.code).toBe(1);
					expect(JSON.parse(unknown.stdout)).toMatchObject({
						ok: false,
						error: { code: "BACKEND_UNAVAILABLE" },
					});
					expect(unknown.stdout).toContain(`The host key of devbox ([127.0.0.1]:${sshd.port}) is not in`);
					await copyFile(sshd.knownHostsPath, join(home, ".ssh", "known_hosts"));
					const read = await keel(args);
					expect(read.stdout + read.stderr).not.toContain("BACKEND_UNAVAILABLE");
					expect(read.code).toBe(0);
					expect(JSON.parse(read.stdout)).toMatchObject({ ok: true, content: "over the alias" });
				} finally {
					await rm(home, { recursive: true, force: true });
					await rm(work, { recursive: true, force: true });
				}
			});
		});
	},
);

describe.skipIf(!hasSshClient())("resolution agrees with OpenSSH's `ssh -G`", () => {
	let dir: string;
	beforeAll(async () => {
		dir = await mkdtemp(join(tmpdir(), "keel-ssh-g-"));
	});
	afterAll(async () => {
		if (dir) await rm(dir, { recursive: true, force: true });
	});

	const me = userInfo().username;
	const cases: { name: string; config: string; hosts: string[]; user?: string; port?: number }[] = [
		{
			name: "first value wins; Host * before or after",
			config:
				"Host *\n  User early\nHost devbox\n  HostName 10.1.1.1\n  User late\n  Port 2201\nHost *\n  Port 9\n",
			hosts: ["devbox", "other"],
		},
		{
			name: "wildcards: ? is one character, * any; case-sensitive; negation",
			config:
				"Host dev?\n  Port 2202\nHost *.corp !secret.corp\n  User corp\nHost DevBox\n  Port 2203\nHost *\n  HostName %h.example\n",
			hosts: ["dev", "dev1", "devbox", "DevBox", "a.corp", "secret.corp"],
		},
		{
			name: "top-level options, key=value, quoting, comments",
			config:
				'Port=2204\nUser "top user"\n# comment\nHost devbox # trailing\n  HostName=127.0.0.2\n  HostKeyAlias devbox-key\n',
			hosts: ["devbox", "x"],
		},
		{
			name: "explicit user and port win",
			config: "Host devbox\n  User fromfile\n  Port 2205\nMatch user explicit\n  HostName matched-explicit\n",
			hosts: ["devbox"],
			user: "explicit",
			port: 2299,
		},
		{
			name: "Match host/originalhost/user/localuser/all and negation",
			config: [
				"Host devbox",
				"  HostName 10.0.0.5",
				"Match host 10.0.0.* !originalhost other",
				"  User matched-host",
				"Match originalhost other",
				"  Port 2206",
				`Match localuser ${me} user matched-*`,
				"  Port 2207",
				"Match !user nobody all",
				"  HostKeyAlias not-nobody",
				"",
			].join("\n"),
			hosts: ["devbox", "other"],
		},
		{
			name: "Match final: a second pass where Host matches the HostName",
			config:
				"Host devbox\n  HostName 10.9.9.9\nHost 10.9.9.*\n  User by-hostname\nMatch final host 10.9.*\n  Port 2208\n",
			hosts: ["devbox", "10.9.9.1"],
		},
	];

	for (const c of cases) {
		it(c.name, async () => {
			const file = join(dir, `${c.name.replace(/\W+/g, "_")}.conf`);
			await writeFile(file, c.config);
			for (const host of c.hosts) {
				const args = [
					"-G",
					"-F",
					file,
					...(c.user ? ["-l", c.user] : []),
					...(c.port ? ["-p", String(c.port)] : []),
				];
				const out = execFileSync("ssh", [...args, host], {
					encoding: "utf8",
					stdio: ["ignore", "pipe", "ignore"],
				});
				const ssh = new Map(
					out
						.split("\n")
						.filter(Boolean)
						.map((l) => [l.slice(0, l.indexOf(" ")), l.slice(l.indexOf(" ") + 1)] as const),
				);
				const t = resolveSshTarget({
					host,
					username: c.user,
					port: c.port,
					sshConfigFile: file,
					knownHostsFile: "/dev/null",
				});
				const ours = {
					hostname: t.host,
					user: t.username,
					port: String(t.port),
					alias: t.hostKeyAlias ?? null,
				};
				const theirs = {
					hostname: ssh.get("hostname"),
					user: ssh.get("user"),
					port: ssh.get("port"),
					alias: ssh.get("hostkeyalias") ?? null,
				};
				expect({ host, ...ours }).toEqual({ host, ...theirs });
			}
		});
	}

	it("Include inside a block applies only when the block does; nested files' Host lines match on their own", async () => {
		const inc = join(dir, "inc");
		await mkdir(inc, { recursive: true });
		await writeFile(join(inc, "a.conf"), "User included\nHost other\n  Port 2210\n");
		await writeFile(join(inc, ".hidden.conf"), "Port 2211\n");
		const file = join(dir, "include.conf");
		await writeFile(file, `Host devbox\n  Include ${inc}/*.conf\n  Port 2212\nHost *\n  HostName h-%h\n`);
		for (const host of ["devbox", "other"]) {
			const out = execFileSync("ssh", ["-G", "-F", file, host], {
				encoding: "utf8",
				stdio: ["ignore", "pipe", "ignore"],
			});
			const get = (k: string) => new RegExp(`^${k} (.*)$`, "m").exec(out)?.[1];
			const t = resolveSshTarget({ host, sshConfigFile: file, knownHostsFile: "/dev/null" });
			expect({ host, h: t.host, u: t.username, p: String(t.port) }).toEqual({
				host,
				h: get("hostname"),
				u: get("user"),
				p: get("port"),
			});
		}
	});
});
