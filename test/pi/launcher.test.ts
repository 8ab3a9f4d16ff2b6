/** `keel agent`: how pi is found and started, and what happens when it is not there. */
import { mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
	agentArgs,
	extensionPath,
	findPi,
	PI_NOT_INSTALLED,
	runAgent,
} from "../../src/adapters/pi/launcher.js";
import { script } from "./helpers.js";

let dir: string;
beforeEach(async () => {
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-pi-launcher-")));
});
afterEach(async () => {
	await rm(dir, { recursive: true, force: true });
});

describe("keel agent", () => {
	it("says clearly when pi is not installed and exits 2", async () => {
		const lines: string[] = [];
		const code = await runAgent(["-p", "hi"], {
			env: { PATH: dir, KEEL_PI_BIN: join(dir, "nope") },
			stderr: (l) => lines.push(l),
		});
		expect(code).toBe(2);
		expect(lines).toEqual([PI_NOT_INSTALLED]);
		expect(findPi({ PATH: dir }, dir)).toBeUndefined();
	});

	it("starts pi with built-ins suppressed and keel's extension, passing the rest through", async () => {
		const out = join(dir, "args.txt");
		const pi = await script(join(dir, "pi"), `printf '%s\\n' "$@" > "${out}"; exit 7`);
		const code = await runAgent(["--mode", "json", "say hi"], {
			env: { PATH: "/usr/bin:/bin", KEEL_PI_BIN: pi },
		});
		expect(code).toBe(7);
		const args = (await readFile(out, "utf8")).trimEnd().split("\n");
		expect(args).toEqual(["--no-builtin-tools", "-e", extensionPath(), "--mode", "json", "say hi"]);
		expect(agentArgs(["x"])).toEqual(["--no-builtin-tools", "-e", extensionPath(), "x"]);
		expect(findPi({ PATH: `/nonexistent:${dir}` }, dir)).toBe(pi);
		expect(findPi({ PATH: "", KEEL_PI_BIN: pi }, dir)).toBe(pi);
	});

	it("finds pi in node_modules/.bin of keel's directory or a parent", async () => {
		await mkdir(join(dir, "node_modules", ".bin"), { recursive: true });
		const pi = await script(join(dir, "node_modules", ".bin", "pi"), "exit 0");
		await mkdir(join(dir, "node_modules", "keel", "dist"), { recursive: true });
		expect(findPi({ PATH: "" }, join(dir, "node_modules", "keel", "dist"))).toBe(pi);
	});

	it("reports a signal death as 128 + signal", async () => {
		const pi = await script(join(dir, "pi"), "kill -TERM $$");
		expect(await runAgent([], { env: { PATH: "/usr/bin:/bin", KEEL_PI_BIN: pi } })).toBe(143);
	});
});
