/**
 * Codex's own apply_patch fixtures (../shared/codex-apply-patch: its scenario tests and cases from
 * its unit tests), run through keel's apply_patch: input/ is copied to a temp root, patch.txt is
 * applied with session.call("apply_patch"), and the tree must equal expected/ byte for byte.
 *
 * keel's documented differences (README "apply_patch", docs/SAFETY.md) are listed in DIFFERENCES:
 * for those cases the test asserts keel's own outcome instead, and for the collision cases also
 * that, once the file has been read, keel produces Codex's tree.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { cp, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeWorkspace, type Workspace } from "../fixtures/workspace.js";

const FIXTURES = "/work/shared/codex-apply-patch";
const have = existsSync(FIXTURES);

type Tree = Record<string, string>;

/** Every regular file under `dir`, relative path → bytes as hex (a byte-exact comparison). */
function tree(dir: string): Tree {
	const out: Tree = {};
	if (!existsSync(dir)) return out;
	const walk = (d: string) => {
		for (const e of readdirSync(d, { withFileTypes: true })) {
			const p = join(d, e.name);
			if (e.isDirectory()) walk(p);
			else out[relative(dir, p)] = readFileSync(p).toString("hex");
		}
	};
	walk(dir);
	return out;
}

/** The same bytes without the final line ending (keel adds no final newline to a file that had none). */
function withoutFinalNewline(hex: string): string {
	const s = Buffer.from(hex, "hex").toString("utf8");
	return Buffer.from(s.replace(/\r?\n$/, ""), "utf8").toString("hex");
}

type Difference =
	| { kind: "all-or-nothing" }
	| { kind: "no-final-newline"; file: string }
	| { kind: "collision"; file: string };

/** Where keel means to differ from Codex (the fixtures' README names each). */
const DIFFERENCES: Record<string, Difference> = {
	"015_failure_after_partial_success_leaves_changes": { kind: "all-or-nothing" },
	"unit-019_update_file_without_trailing_newline": { kind: "no-final-newline", file: "no_newline.txt" },
	"unit-020_crlf_file_without_trailing_newline": {
		kind: "no-final-newline",
		file: "no_trailing_newline.txt",
	},
	"010_move_overwrites_existing_destination": { kind: "collision", file: "renamed/dir/name.txt" },
	"011_add_overwrites_existing_file": { kind: "collision", file: "duplicate.txt" },
};

function cases(): Array<[string, string]> {
	if (!have) return [];
	const out: Array<[string, string]> = [];
	for (const group of ["scenarios", "unit"]) {
		for (const name of readdirSync(join(FIXTURES, group)).sort()) {
			const dir = join(FIXTURES, group, name);
			if (existsSync(join(dir, "patch.txt"))) out.push([name, dir]);
		}
	}
	return out;
}

const workspaces: Workspace[] = [];
afterAll(async () => {
	for (const ws of workspaces) await ws.close();
});

async function setUp(dir: string) {
	// The fixture's input tree is copied in before the session opens on it.
	const ws = await makeWorkspace({ prefix: "keel-codex-fixture-", session: false });
	workspaces.push(ws);
	if (existsSync(join(dir, "input"))) await cp(join(dir, "input"), ws.root, { recursive: true });
	const session = await ws.open({ profile: "unified" });
	const patch = await readFile(join(dir, "patch.txt"), "utf8");
	return { root: ws.root, session, patch };
}

describe.skipIf(!have)("Codex's apply_patch fixtures through keel", () => {
	it("has the cases the README lists (23 scenarios, 20 unit cases)", () => {
		const all = cases();
		expect(all.filter(([n]) => !n.startsWith("unit-"))).toHaveLength(23);
		expect(all.filter(([n]) => n.startsWith("unit-"))).toHaveLength(20);
		for (const name of Object.keys(DIFFERENCES)) expect(all.map(([n]) => n)).toContain(name);
	});

	for (const [name, dir] of cases()) {
		it(name, async () => {
			const { root, session, patch } = await setUp(dir);
			try {
				const before = tree(root);
				const expected = tree(join(dir, "expected"));
				const result = await session.call("apply_patch", { input: patch });
				const diff = DIFFERENCES[name];
				if (!diff) {
					expect(tree(root)).toEqual(expected);
					// Every fixture whose tree stays as it was is a rejection: keel reports an error.
					const rejected = JSON.stringify(expected) === JSON.stringify(before);
					if (rejected) expect(result.ok).toBe(false);
					return;
				}
				if (diff.kind === "all-or-nothing") {
					expect(result.ok).toBe(false);
					expect(tree(root)).toEqual(before);
					return;
				}
				if (diff.kind === "no-final-newline") {
					expect(result.ok).toBe(true);
					expect(tree(root)).toEqual({ ...expected, [diff.file]: withoutFinalNewline(expected[diff.file]) });
					expect(tree(root)[diff.file]).not.toEqual(expected[diff.file]);
					return;
				}
				// A collision: nothing changed, the content kept under a payloadRef ...
				expect(result.ok).toBe(false);
				if (result.ok) return;
				expect(result.error.code).toBe("WRITE_COLLISION");
				expect(result.error.payloadRef).toMatch(/^pl_/);
				expect(tree(root)).toEqual(before);
				// ... and once the session has read the file, Codex's result.
				expect((await session.call("read", { path: diff.file })).ok).toBe(true);
				const again = await session.call("apply_patch", { input: patch });
				expect(again.ok).toBe(true);
				expect(tree(root)).toEqual(expected);
			} finally {
				await session.close();
			}
		});
	}
});
