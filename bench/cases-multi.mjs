/**
 * What all-or-nothing costs: a change to four files made in one call (planned, the
 * intent journal with the previous bytes written and fsynced, four compare-and-swap commits, the
 * journal removed) against the same four edits made one call at a time (four commits, no
 * journal, no all-or-nothing). And the single-file path, which needs no journal: the file tool's
 * one-file edit (through the transaction code) against pi's `edit` tool (the plain commit path).
 *
 * Alone: npm run build && node --expose-gc bench/run.mjs --area=multi
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSession } from "../dist/index.js";

export const area = "multi";
export const title = "All-or-nothing multi-file commits (keel, one call) vs the same edits one by one";
export const candidate = "together";
export const baseline = "separately";

const FILES = 4;
const LINES = 200;

function fileText(j, v) {
	return `header ${j} v${v}\n${`body line of file ${j}\n`.repeat(LINES)}`;
}

/** Files `prefix-j.txt` at v0; each run flips them all to the other version. */
function fixture(dir, prefix, count) {
	for (let j = 0; j < count; j++) writeFileSync(join(dir, `${prefix}-${j}.txt`), fileText(j, 0));
	let v = 0;
	return {
		next() {
			const from = v;
			v = 1 - v;
			return Array.from({ length: count }, (_, j) => ({
				path: `${prefix}-${j}.txt`,
				oldText: `header ${j} v${from}`,
				newText: `header ${j} v${v}`,
			}));
		},
	};
}

function okOrThrow(r) {
	if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
}

const patchOf = (edits) =>
	[
		"*** Begin Patch",
		...edits.flatMap((e) => [`*** Update File: ${e.path}`, "@@", `-${e.oldText}`, `+${e.newText}`]),
		"*** End Patch",
	].join("\n");

export async function setup({ dir }) {
	const stateDir = join(dir, "state");
	const uni = await createSession({ root: dir, profile: "unified", stateDir });
	const pi = await createSession({ root: dir, profile: "pi", stateDir });
	const fileTogether = fixture(dir, "ft", FILES);
	const fileApart = fixture(dir, "fa", FILES);
	const patchTogether = fixture(dir, "pt", FILES);
	const patchApart = fixture(dir, "pa", FILES);
	const oneFile = fixture(dir, "one", 1);
	const onePi = fixture(dir, "onepi", 1);
	const query = (e) => ({ type: "edit", path: e.path, edits: [{ oldText: e.oldText, newText: e.newText }] });
	return {
		cases: [
			{
				name: `${FILES} files edited: one file call vs ${FILES} file calls`,
				iterations: 100,
				warmup: 10,
				contenders: [
					{
						label: "together",
						run: async () => okOrThrow(await uni.call("file", { queries: fileTogether.next().map(query) })),
					},
					{
						label: "separately",
						run: async () => {
							for (const e of fileApart.next()) okOrThrow(await uni.call("file", { queries: [query(e)] }));
						},
					},
				],
			},
			{
				name: `${FILES} files updated: one apply_patch vs ${FILES} apply_patch calls`,
				iterations: 100,
				warmup: 10,
				contenders: [
					{
						label: "together",
						run: async () =>
							okOrThrow(await uni.call("apply_patch", { input: patchOf(patchTogether.next()) })),
					},
					{
						label: "separately",
						run: async () => {
							for (const e of patchApart.next())
								okOrThrow(await uni.call("apply_patch", { input: patchOf([e]) }));
						},
					},
				],
			},
			{
				name: "1 file (no journal): file tool edit (together) vs pi edit tool (separately)",
				iterations: 200,
				warmup: 20,
				contenders: [
					{
						label: "together",
						run: async () => okOrThrow(await uni.call("file", { queries: oneFile.next().map(query) })),
					},
					{
						label: "separately",
						run: async () => {
							const [e] = onePi.next();
							okOrThrow(
								await pi.call("edit", { path: e.path, edits: [{ oldText: e.oldText, newText: e.newText }] }),
							);
						},
					},
				],
			},
		],
		teardown: async () => {
			await uni.close();
			await pi.close();
		},
	};
}
