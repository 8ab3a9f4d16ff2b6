/** The unified `file` tool's schema and the per-type field rules. */

import { KeelError } from "../boundary/errors.js";
import {
	type Accepted,
	array,
	boolean,
	integer,
	object,
	oneOf,
	optional,
	type Schema,
	string,
	withUnpublishedRange,
} from "../boundary/schema.js";
import { CONTENT_REF_SHAPE } from "../safety/content-refs.js";
import { PAYLOAD_REF_SHAPE } from "../safety/payloads.js";
import { checkArgument } from "./common.js";
import { RANGES } from "./ranges.js";

export const MAX_QUERIES = 50;

const BASE_MODES = ["exact", "normalized", "lineRange"] as const;

/** An edit's fields; `hashline` adds the hashline match mode and its start/end refs. */
function editItemFields<M extends string>(modes: readonly M[], hashline: boolean) {
	return {
		oldText: optional(
			string({ description: "Copied from the file (lineRange: optional, must equal the lines)." }),
		),
		newText: string(),
		matchMode: optional(
			oneOf(modes, {
				description: `exact: bytes only; normalized: tolerant only; lineRange: startLine..endLine${hashline ? '; hashline: start..end refs ("12#a3f") from read with hashline: true' : ""}.`,
			}),
		),
		replaceAll: optional(boolean()),
		startLine: optional(withUnpublishedRange(integer(), RANGES.lineNumber)),
		endLine: optional(withUnpublishedRange(integer(), RANGES.lineNumber)),
	};
}

/** The arguments around a given edit item schema. */
function argsWith<E>(editItem: Schema<E>) {
	const query = object({
		type: oneOf(["edit", "write", "delete"]),
		path: string(),
		content: optional(string()),
		contentRef: optional(string()),
		payloadRef: optional(string()),
		edits: optional(array(editItem, { minItems: 1 })),
	});
	return object({ queries: array(query, { minItems: 1, maxItems: MAX_QUERIES }), check: checkArgument() });
}

/** The schema with hashline edits (the unified profile's, where read has a hashline option). */
export const fileSchema = argsWith(
	object({
		...editItemFields([...BASE_MODES, "hashline"], true),
		start: optional(string()),
		end: optional(string({ description: "Default: start." })),
	}),
);

/** The file tool's arguments: the schema's type. */
export type FileArgs = Accepted<typeof fileSchema>;
/** One query of the file tool. */
export type FileQuery = FileArgs["queries"][number];
/** One edit of an edit query. */
export type EditItem = NonNullable<FileQuery["edits"]>[number];

/**
 * The file tool's arguments. `hashline: false` is the shape offered where `read` has no hashline
 * option (pi's read): no hashline match mode, no start/end refs, so the model is never told to use
 * a read it does not have. What each field means is said in file's description.
 */
export function fileSchemaFor(hashline: boolean): Schema<FileArgs> {
	return hashline ? fileSchema : argsWith(object(editItemFields(BASE_MODES, false)));
}

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
		throw new KeelError("INVALID_ARGS", `queries[${i}] (${q.type}) does not take ${stray.join(", ")}.`, {
			path: q.path,
		});
	}
	if (q.type === "delete") return;
	if (present.length !== 1) {
		const need =
			q.type === "write" ? "exactly one of content, contentRef, payloadRef" : "either edits or payloadRef";
		throw new KeelError("INVALID_ARGS", `queries[${i}] (${q.type}) needs ${need}.`, { path: q.path });
	}
	checkRefShape(q.payloadRef, PAYLOAD_REF_SHAPE, "payloadRef", i, q.path);
	checkRefShape(q.contentRef, CONTENT_REF_SHAPE, "contentRef", i, q.path);
	for (const [k, e] of (q.edits ?? []).entries()) checkEditFields(e, i, k, q.path);
}

/** A ref keel never issued (empty, truncated, made up) is refused before any lookup. */
function checkRefShape(ref: string | undefined, shape: RegExp, field: string, i: number, path: string): void {
	if (ref === undefined || shape.test(ref)) return;
	const send = field === "payloadRef" ? "send the content or edits again" : "send the content instead";
	throw new KeelError(
		"INVALID_ARGS",
		`queries[${i}].${field} is not a ${field} keel returned (they look like "${field === "payloadRef" ? "pl_" : "cr_"}" and 24 hex digits); ${send}.`,
		{ path },
	);
}

function checkEditFields(e: EditItem, i: number, k: number, path: string): void {
	const where = `queries[${i}].edits[${k}]`;
	const mode = e.matchMode ?? "exact";
	if (mode === "hashline") {
		const stray = (["oldText", "startLine", "endLine", "replaceAll"] as const).filter(
			(f) => e[f] !== undefined,
		);
		if (stray.length)
			throw new KeelError("INVALID_ARGS", `${where}: hashline does not take ${stray.join(", ")}.`, { path });
		if (e.start === undefined)
			throw new KeelError("INVALID_ARGS", `${where}: hashline needs start (and optionally end).`, { path });
		return;
	}
	if (e.start !== undefined || e.end !== undefined) {
		throw new KeelError("INVALID_ARGS", `${where}: start/end need matchMode "hashline".`, { path });
	}
	if (mode === "lineRange") {
		if (e.startLine === undefined || e.endLine === undefined) {
			throw new KeelError("INVALID_ARGS", `${where}: lineRange needs startLine and endLine.`, { path });
		}
		if (e.replaceAll)
			throw new KeelError("INVALID_ARGS", `${where}: replaceAll does not apply to lineRange.`, { path });
		return;
	}
	if (e.startLine !== undefined || e.endLine !== undefined) {
		throw new KeelError("INVALID_ARGS", `${where}: startLine/endLine need matchMode "lineRange".`, { path });
	}
	if (e.oldText === undefined)
		throw new KeelError("INVALID_ARGS", `${where}: ${mode} needs oldText.`, { path });
}
