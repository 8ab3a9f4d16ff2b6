/**
 * The catastrophic-command seatbelt refuses by meaning, however the command is spelled: a table
 * of spellings an attacker (or a careless model) would try, and the look-alikes that must run.
 * The refused rows go through the bash tool only inside the bwrap sandbox (a regression there
 * would run them: only the workspace and /tmp are writable inside); the table is checked against
 * the policy itself everywhere.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import { Session } from "../../src/session.js";
import { refusalFor } from "../../src/tools/bash-policy.js";
import { bwrapAvailable } from "../contract/backends.js";

/** Recursive removals of /, a top-level directory or a home directory. */
const REMOVALS = [
	"rm -rf /",
	"rm -rf -- /",
	'rm -rf "/"',
	"rm -rf '/'",
	"rm --no-preserve-root -rf /",
	"rm -r -f --no-preserve-root /",
	'rm -rf "$HOME"',
	// biome-ignore lint/suspicious/noTemplateCurlyInString: shell source, not a template
	"rm -rf ${HOME}/",
	"rm -rf ~",
	"rm -rf ~/*",
	"rm -rf ~root",
	"rm -rf //",
	"rm -rf /./",
	"rm -rf /tmp/..",
	"rm -rf /*",
	"rm -fr /usr",
	"rm -R /etc",
	"rm --recursive --force /",
	"rm / -rf",
	"rm -rf /{,}",
	"rm -rf $'\\x2f'",
	"r\\m -rf /",
	'"rm" -rf /',
	"/bin/rm -rf /",
	"sudo rm -rf /",
	"sudo {rm,-rf} /",
	"sudo -u root rm -rf --no-preserve-root /",
	"env X=1 nice -n 5 rm -rf /",
	"timeout 5 rm -rf /",
	"echo / | xargs rm -rf /",
	"X=1 rm -rf / 2>/dev/null",
	"cd /tmp && rm -rf /",
	"true; rm -rf /",
	"echo $(rm -rf /)",
	"(rm -rf /)",
	"if true; then rm -rf /; fi",
	"bash -c 'rm -rf /'",
	'sh -ec "rm -rf -- /"',
	"eval 'rm -rf /'",
	"bash <<'EOF'\nrm -rf /\nEOF",
	'rm -rf "$DIR/"',
	'rm -rf "$(pwd)"/',
	"find / -delete",
	"find ~ -exec rm -rf {} +",
];
/** Other catastrophes; never run, on any backend. */
const OTHERS = [
	":(){ :|:& };:",
	"bomb() { bomb | bomb & }; bomb",
	"f() { f & f; }; f",
	"mkfs.ext4 /dev/sda1",
	"sudo mkfs -t ext4 /dev/nvme0n1",
	"dd if=/dev/zero of=/dev/sda bs=1M",
	"dd if=/dev/zero of=//dev/nvme0n1",
	"echo x > /dev/sda",
	"cat img >> /dev/vda",
	"tee /dev/sdb < img",
];
/** Look-alikes: these must run. */
const ALLOWED = [
	"ls -la",
	"npm test -- --run",
	"rm -rf ./build",
	"rm -rf build/",
	"rm -rf /tmp/x",
	"rm -rf ~/project/build",
	'rm -rf "$HOME/.cache/thing"',
	"rm -rf '~'",
	"rm /",
	"rm -f /tmp/x",
	'echo "rm -rf /"',
	"echo 'rm -rf /'",
	"grep -r 'rm -rf /' .",
	"git commit -m 'rm -rf /'",
	'rm -rf "$DIR"',
	"find . -delete",
	"find / -name x",
	"dd if=/dev/zero of=./disk.img bs=1M count=1",
	"echo x > /dev/null",
	"f() { f; }",
];

describe("the policy itself", () => {
	it.each([...REMOVALS, ...OTHERS])("%s is refused", async (command) => {
		const why = await refusalFor(command);
		expect(why, command).toMatch(/^Refused: the command is /);
	});
	it.each(ALLOWED)("%s may run", async (command) => {
		expect(await refusalFor(command)).toBeUndefined();
	});
});

const sandboxed = await bwrapAvailable();
describe("through the bash tool", () => {
	let scratch: string;
	let root: string;
	beforeEach(async () => {
		scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-bash-policy-")));
		root = join(scratch, "ws");
		await mkdir(root);
		await writeFile(join(root, "canary.txt"), "alive\n");
	});
	afterEach(async () => {
		await rm(scratch, { recursive: true, force: true });
	});

	it.each(["echo 'rm -rf /'", "rm -rf ./build && echo done"])("local: %s runs", async (command) => {
		const s = await Session.create({ root });
		try {
			const r = await s.call("bash", { command });
			expect(r.ok, JSON.stringify(r)).toBe(true);
		} finally {
			await s.close();
		}
	});

	describe.skipIf(sandboxed !== true)("bwrap", () => {
		it.each(REMOVALS)("%s is COMMAND_REFUSED and nothing is removed", async (command) => {
			const s = await Session.create({ root, backend: createBwrapBackend({ roots: [root] }) });
			try {
				const r = await s.call("bash", { command });
				expect(r.ok, JSON.stringify(r)).toBe(false);
				if (!r.ok) expect(r.error.code).toBe("COMMAND_REFUSED");
				expect(await readFile(join(root, "canary.txt"), "utf8")).toBe("alive\n");
			} finally {
				await s.close();
			}
		});
	});
	if (sandboxed !== true) it.skip(`bwrap: ${sandboxed}`, () => {});
});
