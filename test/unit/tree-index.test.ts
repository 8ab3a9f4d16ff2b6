/**
 * The checkpoint index's child lists (checkpoints/tree-index.ts) are what a partial scan relists
 * and forgets by: after any sequence of sets and deletes they must name exactly the paths a scan
 * of every key by prefix would find, or a partial scan keeps entries that are gone (a restore then
 * recreates deleted files) or drops live ones (their changes go unrecorded).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TreeIndex } from "../../src/checkpoints/tree-index.js";
import type { ScannedEntry } from "../../src/checkpoints/types.js";

const ENTRY: ScannedEntry = { state: { kind: "dir", mode: 0o755 }, identity: "", racy: false };
const ROOT = "/w";
const path = fc
	.array(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 4 })
	.map((parts) => `${ROOT}/${parts.join("/")}`);
const step = fc.oneof(
	fc.record({ op: fc.constant("set" as const), path }),
	fc.record({ op: fc.constant("delete" as const), path }),
	fc.record({ op: fc.constant("clear" as const) }),
);

const sorted = (xs: Iterable<string>) => [...xs].sort();
const byPrefix = (keys: Iterable<string>, dir: string, direct: boolean) =>
	sorted(
		[...keys].filter((k) => k.startsWith(`${dir}/`) && (!direct || k.indexOf("/", dir.length + 1) === -1)),
	);

describe("the checkpoint index's child lists", () => {
	it("name exactly the paths below each directory after any sets and deletes", () => {
		fc.assert(
			fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
				const index = new TreeIndex();
				for (const s of steps) {
					if (s.op === "set") index.set(s.path, ENTRY);
					else if (s.op === "delete") index.delete(s.path);
					else index.clear();
				}
				const dirs = [ROOT, ...index.keys(), `${ROOT}/a`, `${ROOT}/a/b`];
				for (const dir of dirs) {
					expect(sorted(index.childrenOf(dir))).toEqual(byPrefix(index.keys(), dir, true));
					expect(sorted(index.below(dir))).toEqual(byPrefix(index.keys(), dir, false));
				}
			}),
			{ numRuns: 300 },
		);
	});

	it("a child list is a copy: deleting while going through it misses nothing", () => {
		const index = new TreeIndex();
		for (const name of ["x", "y", "z"]) index.set(`${ROOT}/${name}`, ENTRY);
		for (const p of index.childrenOf(ROOT)) index.delete(p);
		expect(index.size).toBe(0);
		expect(index.childrenOf(ROOT)).toEqual([]);
	});
});
