/**
 * keel's exec backend over an AI SDK sandbox session (container/ai-sdk.ts). No provider runs here:
 * test/fixtures/ai-sdk-sandbox.ts implements the `run` primitive over a real local `sh`, returning
 * strings as a JSON API would, so these tests check that keel gets exact bytes through a text-only
 * channel, stdin without a stdin, and the session's own limits.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAiSdkSandboxBackend } from "../../src/backend/container/ai-sdk.js";
import { Session } from "../../src/session.js";
import { localAiSdkSandbox } from "../fixtures/ai-sdk-sandbox.js";

describe("exec backend over an AI SDK sandbox session (local stand-in)", { timeout: 60_000 }, () => {
	let dir: string;
	beforeAll(async () => {
		dir = await realpath(await mkdtemp(join(tmpdir(), "keel-aisdk-")));
	});
	afterAll(async () => {
		await rm(dir, { recursive: true, force: true });
	});

	it("every byte value survives the string channel both ways, small and chunked", async () => {
		const session = localAiSdkSandbox();
		const b = createAiSdkSandboxBackend(session);
		const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
		const big = Buffer.concat([randomBytes(300 * 1024), all]); // > one environment chunk
		for (const [name, data] of [
			["all.bin", all],
			["big.bin", big],
		] as const) {
			const file = join(dir, name);
			const before = session.runs;
			await b.fs.writeFile(file, data);
			expect((await readFile(file)).equals(data)).toBe(true);
			expect((await b.fs.readFile(file)).equals(data)).toBe(true);
			expect(await b.fs.hashFile(file)).toBe(
				(await import("node:crypto")).createHash("sha256").update(data).digest("hex"),
			);
			if (name === "big.bin") expect(session.runs - before).toBeGreaterThan(4); // staged in chunks
		}
		expect((await readFile(join(dir, "all.bin"))).length).toBe(256);
		// The staged temp files are gone: those this session staged into (other test files running
		// at the same time stage theirs in /tmp too).
		const staged = new Set(session.commands.flatMap((c) => c.match(/\/tmp\/\.keel-in-[0-9a-f]+/g) ?? []));
		expect(staged.size).toBeGreaterThan(0);
		const { existsSync } = await import("node:fs");
		expect([...staged].filter((p) => existsSync(p))).toEqual([]);
		await b.close();
	});

	it("tools work through it: edit with compare-and-swap, bash exit codes, grep; python is unavailable", async () => {
		const root = join(dir, "ws");
		await mkdir(root);
		await writeFile(join(root, "a.txt"), "alpha\nbeta\n");
		const open = (profile: "pi" | "unified") =>
			Session.create({
				backend: createAiSdkSandboxBackend(localAiSdkSandbox()),
				root,
				spillDir: join(dir, "spill"),
				profile,
			});
		const session = await open("pi");
		const unified = await open("unified");
		try {
			expect((await session.call("read", { path: "a.txt" })).ok).toBe(true);
			const edit = await session.call("edit", {
				path: "a.txt",
				edits: [{ oldText: "beta", newText: "gamma" }],
			});
			expect(edit.ok, JSON.stringify(edit)).toBe(true);
			expect(await readFile(join(root, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
			const bash = await session.call("bash", { command: "echo out; echo err >&2; exit 7" });
			expect(JSON.stringify(bash)).toContain("out");
			expect(JSON.stringify(bash)).toContain("7");
			const grep = await session.call("grep", { pattern: "gamma" });
			expect(grep.ok && JSON.stringify(grep.content)).toContain("a.txt");
			const py = await unified.call("python", { code: "1" });
			expect(!py.ok && py.error.code).toBe("BACKEND_UNAVAILABLE");
		} finally {
			await session.close();
			await unified.close();
		}
	});
});
