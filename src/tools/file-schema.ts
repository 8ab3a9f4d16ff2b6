/** The unified `file` tool's schema (REQUIREMENTS T2) and the per-type field rules. */
import { type Static, Type } from "typebox";
import { KeelError } from "../boundary/errors.js";

export const MAX_QUERIES = 50;

const editItem = Type.Object(
	{
		oldText: Type.Optional(Type.String({ description: "Text to replace (exact or normalized). Optional for lineRange: when given it must equal those lines." })),
		newText: Type.String({ description: "Replacement text." }),
		matchMode: Type.Optional(
			Type.Union([Type.Literal("exact"), Type.Literal("normalized"), Type.Literal("lineRange")], {
				description:
					"exact (default): oldText must match byte for byte. normalized: quotes, dashes, runs of blanks and trailing whitespace are folded. lineRange: replace lines startLine..endLine of a freshly read file.",
			}),
		),
		replaceAll: Type.Optional(Type.Boolean({ description: "Replace every occurrence instead of requiring a unique one." })),
		startLine: Type.Optional(Type.Integer({ minimum: 1, description: "First line (1-based) for lineRange." })),
		endLine: Type.Optional(Type.Integer({ minimum: 1, description: "Last line (inclusive) for lineRange." })),
	},
	{ additionalProperties: false },
);

const query = Type.Object(
	{
		type: Type.Union([Type.Literal("edit"), Type.Literal("write"), Type.Literal("delete")], {
			description: "edit: targeted replacements; write: create a file or replace one you have read; delete: remove a file or symlink.",
		}),
		path: Type.String({ description: "File path (relative to the workspace root or absolute)." }),
		content: Type.Optional(Type.String({ description: "write: the whole new content." })),
		contentRef: Type.Optional(Type.String({ description: "write: a contentRef from an earlier result, instead of content." })),
		payloadRef: Type.Optional(
			Type.String({ description: "write/edit: a payloadRef from a failed call, to retry it on a corrected path without resending the payload." }),
		),
		edits: Type.Optional(Type.Array(editItem, { minItems: 1, description: "edit: one or more replacements, all matched against the original file." })),
	},
	{ additionalProperties: false },
);

export const fileSchema = Type.Object(
	{ queries: Type.Array(query, { minItems: 1, maxItems: MAX_QUERIES, description: "Mutations, preflighted together, then run in order." }) },
	{ additionalProperties: false },
);

export type FileQuery = Static<typeof query>;
export type EditItem = Static<typeof editItem>;

const FIELDS_BY_TYPE: Record<FileQuery["type"], ReadonlyArray<keyof FileQuery>> = {
	write: ["content", "contentRef", "payloadRef"],
	edit: ["edits", "payloadRef"],
	delete: [],
};
const OPTIONAL_FIELDS: ReadonlyArray<keyof FileQuery> = ["content", "contentRef", "payloadRef", "edits"];

/** Fields that do not belong to the query's type are errors; each type needs exactly one source. */
export function checkQueryFields(q: FileQuery, i: number): void {
	const allowed = FIELDS_BY_TYPE[q.type];
	const present = OPTIONAL_FIELDS.filter((f) => q[f] !== undefined);
	const stray = present.filter((f) => !allowed.includes(f));
	if (stray.length) {
		throw new KeelError("INVALID_ARGS", `queries[${i}] (${q.type}) does not take ${stray.join(", ")}.`, { path: q.path });
	}
	if (q.type === "delete") return;
	if (present.length !== 1) {
		const need = q.type === "write" ? "exactly one of content, contentRef, payloadRef" : "either edits or payloadRef";
		throw new KeelError("INVALID_ARGS", `queries[${i}] (${q.type}) needs ${need}.`, { path: q.path });
	}
	q.edits?.forEach((e, k) => checkEditFields(e, i, k, q.path));
}

function checkEditFields(e: EditItem, i: number, k: number, path: string): void {
	const where = `queries[${i}].edits[${k}]`;
	const mode = e.matchMode ?? "exact";
	if (mode === "lineRange") {
		if (e.startLine === undefined || e.endLine === undefined) {
			throw new KeelError("INVALID_ARGS", `${where}: lineRange needs startLine and endLine.`, { path });
		}
		if (e.replaceAll) throw new KeelError("INVALID_ARGS", `${where}: replaceAll does not apply to lineRange.`, { path });
		return;
	}
	if (e.startLine !== undefined || e.endLine !== undefined) {
		throw new KeelError("INVALID_ARGS", `${where}: startLine/endLine need matchMode "lineRange".`, { path });
	}
	if (e.oldText === undefined) throw new KeelError("INVALID_ARGS", `${where}: ${mode} needs oldText.`, { path });
}
