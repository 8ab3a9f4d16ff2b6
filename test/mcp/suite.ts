/**
 * The MCP contract, run over each transport (stdio.test.ts, http.test.ts): the SDK client lists every
 * tool with its schema, description and annotations, calls each on a temp tree (checked on disk),
 * gets structured isError results for bad input, and runs 32 calls in parallel without a lost update.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Profile, toolsForProfile } from "../../src/tools/registry.js";
import { call, expectCode, expectOk, makeDir, PNG_1x1, removeDir, type textOf } from "./helpers.js";

export interface Connected {
	client: Client;
	close(): Promise<void>;
}

export type Connect = (root: string, profile: Profile) => Promise<Connected>;

const READ_ONLY = ["read", "grep", "find", "ls", "read_file", "list_dir"];
const DESTRUCTIVE = [
	"write",
	"edit",
	"file",
	"bash",
	"python",
	"python_jobs",
	"apply_patch",
	"shell",
	"process",
	"exec_command",
	"write_stdin",
];

const FILES = {
	"src/a.ts": "export const a = 1; // needle\n",
	"src/b.ts": "export const b = 2;\n",
	"docs/readme.md": "# title\nno match here\n",
	"img.png": PNG_1x1,
};

export function mcpContract(transport: string, connect: Connect): void {
	describe(`MCP over ${transport}`, () => {
		let dir: string;
		let conn: Connected | undefined;
		const open = async (profile: Profile = "pi") => {
			conn = await connect(dir, profile);
			return conn.client;
		};
		beforeEach(async () => {
			dir = await makeDir(transport, FILES);
		});
		afterEach(async () => {
			await conn?.close();
			conn = undefined;
			await removeDir(dir);
		});

		for (const profile of ["pi", "unified", "codex"] as const) {
			it(`lists the ${profile} palette with schemas, descriptions and annotations`, async () => {
				const client = await open(profile);
				const { tools } = await client.listTools();
				const defs = toolsForProfile(profile);
				expect(tools.map((t) => t.name)).toEqual(defs.map((d) => d.name));
				for (const def of defs) {
					const tool = tools.find((t) => t.name === def.name)!;
					expect(tool.description).toBe(def.description);
					expect(tool.title).toBe(def.label);
					expect(tool.inputSchema).toEqual(def.parameters);
					expect(tool.annotations?.readOnlyHint).toBe(READ_ONLY.includes(def.name));
					expect(tool.annotations?.destructiveHint).toBe(DESTRUCTIVE.includes(def.name));
					expect(tool.annotations?.idempotentHint).toBe(def.annotations.idempotent);
				}
			});
		}

		it("calls every pi tool and the disk shows it", async () => {
			const client = await open();
			expectOk(await call(client, "write", { path: "new/deep/file.txt", content: "hello\nworld\n" }));
			expect(await readFile(join(dir, "new/deep/file.txt"), "utf8")).toBe("hello\nworld\n");

			expect(expectOk(await call(client, "read", { path: "new/deep/file.txt" }))).toContain("hello\nworld");

			const edited = await call(client, "edit", {
				path: "new/deep/file.txt",
				edits: [{ oldText: "world", newText: "there" }],
			});
			expectOk(edited);
			expect(await readFile(join(dir, "new/deep/file.txt"), "utf8")).toBe("hello\nthere\n");
			// keel's details travel in _meta (a diff for edit), not in structuredContent.
			expect(JSON.stringify(edited._meta?.["keel/details"])).toContain("there");
			expect(edited.structuredContent).toBeUndefined();

			const bash = expectOk(await call(client, "bash", { command: "echo out-$((6*7)); pwd" }));
			expect(bash).toContain("out-42");
			expect(bash).toContain(dir);

			expect(expectOk(await call(client, "grep", { pattern: "needle" }))).toMatch(/src\/a\.ts:1: /);
			const found = expectOk(await call(client, "find", { pattern: "*.ts" }));
			expect(found.split("\n").sort()).toEqual(expect.arrayContaining(["src/a.ts", "src/b.ts"]));
			const listing = expectOk(await call(client, "ls", { path: "." }));
			for (const name of ["src/", "docs/", "img.png", "new/"]) expect(listing).toContain(name);

			const image = await call(client, "read", { path: "img.png" });
			expectOk(image);
			expect(image.content).toEqual(
				expect.arrayContaining([{ type: "image", data: PNG_1x1.toString("base64"), mimeType: "image/png" }]),
			);
		});

		it("calls the unified file tool: write, edit, delete", async () => {
			const client = await open("unified");
			expectOk(
				await call(client, "file", { queries: [{ type: "write", path: "u.txt", content: "one\ntwo\n" }] }),
			);
			expect(await readFile(join(dir, "u.txt"), "utf8")).toBe("one\ntwo\n");
			expectOk(
				await call(client, "file", {
					queries: [{ type: "edit", path: "u.txt", edits: [{ oldText: "two", newText: "2" }] }],
				}),
			);
			expect(await readFile(join(dir, "u.txt"), "utf8")).toBe("one\n2\n");
			expectOk(await call(client, "file", { queries: [{ type: "delete", path: "u.txt" }] }));
			await expect(stat(join(dir, "u.txt"))).rejects.toMatchObject({ code: "ENOENT" });
			// The pi-only tools are not there.
			expectCode(await call(client, "write", { path: "x", content: "" }), "UNKNOWN_TOOL");
		});

		it("answers bad input with isError results carrying the keel code, never protocol errors", async () => {
			const client = await open();
			const before = await readFile(join(dir, "src/a.ts"), "utf8");
			const missing = expectCode(await call(client, "read", {}), "INVALID_ARGS");
			expect(missing.message).toContain("path");
			expectCode(await call(client, "edit", { path: "src/a.ts" }), "INVALID_ARGS");
			expectCode(await call(client, "write", { path: 42, content: "x" }), "INVALID_ARGS");
			expectCode(await call(client, "read", { path: "/etc/hostname" }), "PATH_OUTSIDE_ROOTS");
			expectCode(await call(client, "write", { path: "../escape.txt", content: "x" }), "PATH_OUTSIDE_ROOTS");
			expectCode(await call(client, "read", { path: "nope.txt" }), "NOT_FOUND");
			expectCode(
				await call(client, "edit", { path: "src/a.ts", edits: [{ oldText: "absent", newText: "x" }] }),
				"NO_MATCH",
			);
			expectCode(await call(client, "nosuchtool", {}), "UNKNOWN_TOOL");
			const failed = expectCode(
				await call(client, "bash", { command: "echo partial; exit 3" }),
				"COMMAND_FAILED",
			);
			expect(failed.message).toContain("partial");
			expect(await readFile(join(dir, "src/a.ts"), "utf8")).toBe(before);
			await expect(stat(join(dir, "../escape.txt"))).rejects.toMatchObject({ code: "ENOENT" });
			// Arguments that are not an object at all still come back as a result.
			const raw = (await client.callTool({ name: "read" })) as Parameters<typeof textOf>[0];
			expectCode(raw, "INVALID_ARGS");
		});

		it("runs 32 edits to one file in parallel on one connection, each applied exactly once", async () => {
			const client = await open();
			const N = 32;
			const slot = (i: number) => `slot-${String(i).padStart(2, "0")}`;
			const lines = Array.from({ length: N }, (_, i) => `${slot(i)}: old`);
			expectOk(await call(client, "write", { path: "shared.txt", content: `${lines.join("\n")}\n` }));
			const results = await Promise.all(
				lines.map((_, i) =>
					call(client, "edit", {
						path: "shared.txt",
						edits: [{ oldText: `${slot(i)}: old`, newText: `${slot(i)}: new by call ${i}` }],
					}),
				),
			);
			for (const r of results) expectOk(r);
			const after = await readFile(join(dir, "shared.txt"), "utf8");
			const expected = Array.from({ length: N }, (_, i) => `${slot(i)}: new by call ${i}`);
			expect(after).toBe(`${expected.join("\n")}\n`);
		});

		it("runs 32 mixed calls in parallel: writes to distinct files, reads, searches", async () => {
			const client = await open();
			const results = await Promise.all(
				Array.from({ length: 32 }, (_, i) => {
					if (i % 4 === 0) return call(client, "write", { path: `par/${i}.txt`, content: `file ${i}\n` });
					if (i % 4 === 1) return call(client, "read", { path: "src/b.ts" });
					if (i % 4 === 2) return call(client, "grep", { pattern: "needle", path: "src" });
					return call(client, "bash", { command: `echo call-${i}` });
				}),
			);
			results.forEach((r, i) => {
				const text = expectOk(r);
				if (i % 4 === 1) expect(text).toContain("export const b = 2;");
				if (i % 4 === 3) expect(text).toContain(`call-${i}`);
			});
			for (let i = 0; i < 32; i += 4) {
				expect(await readFile(join(dir, `par/${i}.txt`), "utf8")).toBe(`file ${i}\n`);
			}
		});
	});
}
