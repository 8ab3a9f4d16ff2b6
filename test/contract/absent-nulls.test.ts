/**
 * null in an optional field means "absent", for every tool of every profile (the form a model in
 * strict mode sends, since strict mode makes every field required); null in a required field is
 * still refused, with nothing changed on disk. strictSchema() offers exactly those fields as
 * nullable.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type JsonSchema, strictSchema } from "../../src/boundary/schema.js";
import { validate } from "../../src/boundary/validate.js";
import { createSession, type Session } from "../../src/index.js";
import { PROFILES, toolsForProfile } from "../../src/tools/registry.js";

describe("null in an optional field is absent", () => {
	let dir: string;
	let session: Session;
	beforeEach(async () => {
		dir = await mkdtemp(join(tmpdir(), "keel-nulls-"));
		await writeFile(join(dir, "notes.txt"), "alpha\nbeta\n");
		session = await createSession({ root: dir, profile: "unified" });
	});
	afterEach(async () => {
		await session.close();
		await rm(dir, { recursive: true, force: true });
	});

	it("top-level and nested optional nulls are left out before validation", async () => {
		const read = await session.callDynamic("read", { path: "notes.txt", offset: null, limit: null });
		expect(read).toMatchObject({ ok: true });
		const edit = await session.callDynamic("file", {
			queries: [
				{
					type: "edit",
					path: "notes.txt",
					content: null,
					contentRef: null,
					payloadRef: null,
					edits: [
						{
							oldText: "alpha",
							newText: "ALPHA",
							matchMode: null,
							replaceAll: null,
							startLine: null,
							endLine: null,
							start: null,
							end: null,
						},
					],
				},
			],
		});
		expect(edit).toMatchObject({ ok: true });
		expect(await readFile(join(dir, "notes.txt"), "utf8")).toBe("ALPHA\nbeta\n");
		const bash = await session.callDynamic("bash", { command: "echo ran", timeout: null, background: null });
		expect(bash).toMatchObject({ ok: true, content: [{ type: "text", text: "ran" }] });
	});

	it("null in a required field is refused and changes nothing", async () => {
		await session.callDynamic("read", { path: "notes.txt" });
		const cases: Array<[string, unknown]> = [
			["read", { path: null }],
			[
				"file",
				{ queries: [{ type: "edit", path: "notes.txt", edits: [{ oldText: "alpha", newText: null }] }] },
			],
			["file", { queries: [{ type: null, path: "notes.txt", content: "x" }] }],
			["file", { queries: null }],
		];
		for (const [tool, args] of cases) {
			const r = await session.callDynamic(tool, args);
			expect(r.ok ? "ok" : r.error.code, JSON.stringify(args)).toBe("INVALID_ARGS");
		}
		expect(await readFile(join(dir, "notes.txt"), "utf8")).toBe("alpha\nbeta\n");
	});
});

/** Every optional field of `schema`, with its path, at any depth. */
function optionalFields(schema: JsonSchema, at = ""): Array<{ path: string; schema: JsonSchema }> {
	if (schema.type === "array" && schema.items) return optionalFields(schema.items, `${at}[]`);
	if (schema.type !== "object") return [];
	const out: Array<{ path: string; schema: JsonSchema }> = [];
	const required = new Set(schema.required ?? []);
	for (const [key, sub] of Object.entries(schema.properties ?? {})) {
		if (!required.has(key)) out.push({ path: `${at}.${key}`, schema: sub });
		out.push(...optionalFields(sub, `${at}.${key}`));
	}
	return out;
}

describe("strictSchema", () => {
	for (const profile of PROFILES) {
		it(`${profile}: every field required, exactly the optional ones nullable, the rest unchanged`, () => {
			for (const tool of toolsForProfile(profile)) {
				const before = JSON.stringify(tool.parameters);
				const strict = strictSchema(tool.parameters);
				const walk = (s: ReturnType<typeof strictSchema>, orig: JsonSchema, at: string) => {
					if (orig.type === "object") {
						expect(s.required, `${tool.name}${at}`).toEqual(Object.keys(orig.properties ?? {}));
						expect(s.additionalProperties).toBe(false);
						const required = new Set(orig.required ?? []);
						for (const [key, sub] of Object.entries(orig.properties ?? {})) {
							const got = s.properties![key];
							const nullable = !required.has(key);
							expect(got.type, `${tool.name}${at}.${key}`).toEqual(nullable ? [sub.type, "null"] : sub.type);
							if (sub.enum) expect(got.enum).toEqual(nullable ? [...sub.enum, null] : sub.enum);
							expect(got.description).toBe(sub.description);
							walk(got, sub, `${at}.${key}`);
						}
					}
					if (orig.items) walk(s.items!, orig.items, `${at}[]`);
				};
				walk(strict, tool.parameters, "");
				// keel's own schema (what the checker and non-strict hosts use) is left as it was.
				expect(JSON.stringify(tool.parameters)).toBe(before);
			}
		});
	}

	it("each optional field, sent as null, passes the tool's own preparation and check", () => {
		for (const profile of PROFILES) {
			for (const tool of toolsForProfile(profile)) {
				for (const field of optionalFields(tool.parameters)) {
					if (field.path.includes("[]")) continue;
					const key = field.path.slice(1);
					if (key.includes(".")) continue;
					const prepared = tool.prepareArguments!({ [key]: null });
					const problems = validate(tool.parameters, prepared).filter(
						(p) => p.includes(`"${key}"`) || p.startsWith(`${key} `),
					);
					expect(problems, `${profile}/${tool.name}.${key}`).toEqual([]);
				}
			}
		}
	});
});
