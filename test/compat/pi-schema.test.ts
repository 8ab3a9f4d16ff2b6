/**
 * keel's pi-profile tools have pi's names and argument schemas. Compared against the installed
 * pi (0.73.1): same properties, types, required fields and argument descriptions. keel adds
 * `additionalProperties: false` everywhere (extra fields are errors); pi has it on edit only. The
 * tool descriptions are keel's own where keel behaves otherwise (write refuses to overwrite an
 * unread file) or says the same in fewer words (test/contract/tool-text.test.ts holds them).
 */
import * as pi from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { toolsForProfile } from "../../src/tools/registry.js";

const factories: Record<string, (cwd: string) => { name: string; parameters: unknown; description: string }> =
	{
		read: pi.createReadToolDefinition,
		write: pi.createWriteToolDefinition,
		edit: pi.createEditToolDefinition,
		bash: pi.createBashToolDefinition,
		grep: pi.createGrepToolDefinition,
		find: pi.createFindToolDefinition,
		ls: pi.createLsToolDefinition,
	};

/** JSON form without keel's stricter additionalProperties, so the rest can be compared exactly. */
function comparable(schema: unknown): unknown {
	return JSON.parse(JSON.stringify(schema), (key, value) =>
		key === "additionalProperties" ? undefined : value,
	);
}

describe("pi-compatible schemas", () => {
	const keel = toolsForProfile("pi");

	it("has exactly pi's seven tool names", () => {
		expect(keel.map((t) => t.name).sort()).toEqual(Object.keys(factories).sort());
	});

	for (const [name, factory] of Object.entries(factories)) {
		it(`${name}: same properties, types, required fields and argument descriptions as pi`, () => {
			const theirs = factory("/tmp");
			const ours = keel.find((t) => t.name === name)!;
			expect(theirs.name).toBe(name);
			expect(comparable(ours.parameters)).toEqual(comparable(theirs.parameters));
		});

		it(`${name}: keel refuses extra fields`, () => {
			const ours = keel.find((t) => t.name === name)!;
			expect((ours.parameters as { additionalProperties?: unknown }).additionalProperties).toBe(false);
		});
	}
});
