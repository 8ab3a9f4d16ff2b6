/**
 * Structural fingerprints and previews of tool arguments.
 *
 * `fingerprint` walks a value with an explicit stack and feeds type tags, lengths and content into
 * one SHA-256 as it goes: strings go to `hash.update` directly, so a 20 MB argument is hashed
 * without JSON.stringify, without concatenation and without a second copy. The encoding is
 * prefix-free (every string and container carries its length), so `["ab"]` and `["a","b"]`
 * differ, and so do `{a: "1"}` and `{a: 1}`. Object keys are sorted; arrays keep their order.
 *
 * `structuralPreview` describes the shape (`{path: str(12), edits: [2 × {oldText: str(4000), …}]}`)
 * within a character budget and never copies a long string.
 */
import { createHash, type Hash } from "node:crypto";

/** Deeper than this, a value hashes as a marker instead of being walked. */
export const MAX_FINGERPRINT_DEPTH = 1000;

/** One container being walked: its entries are visited in order, `i` is the next one. */
type Frame =
	| { kind: "array"; value: ArrayLike<unknown>; i: number; depth: number }
	| { kind: "object"; value: object; keys: string[]; i: number; depth: number }
	| { kind: "entries"; value: unknown[]; owner: object; i: number; depth: number };

function updateString(hash: Hash, tag: string, s: string): void {
	// UTF-16 code units: lossless for lone surrogates, which UTF-8 would fold into U+FFFD.
	hash.update(`${tag}${s.length}:`);
	hash.update(s, "utf16le");
}

function updateNumber(hash: Hash, n: number): void {
	hash.update(`n${Object.is(n, -0) ? "-0" : String(n)};`);
}

/** 32 lowercase hex chars (SHA-256 cut to 128 bits) for `value`'s structure and content. Never throws. */
export function fingerprint(value: unknown): string {
	const hash = createHash("sha256");
	// The containers on the current path: a value met again here is a cycle (shared, acyclic
	// references are walked each time, as JSON would see them).
	const onPath = new Set<object>();
	const stack: Frame[] = [];

	/** Hash a leaf, or open a frame for a container. */
	const visit = (v: unknown, depth: number): void => {
		try {
			switch (typeof v) {
				case "string":
					updateString(hash, "s", v);
					return;
				case "number":
					updateNumber(hash, v);
					return;
				case "boolean":
					hash.update(v ? "T" : "F");
					return;
				case "undefined":
					hash.update("U");
					return;
				case "bigint":
					hash.update(`I${v.toString()};`);
					return;
				case "symbol":
					updateString(hash, "Y", v.description ?? "");
					return;
				case "function":
					hash.update("f");
					return;
			}
			if (v === null) {
				hash.update("N");
				return;
			}
			const obj = v as object;
			if (onPath.has(obj)) {
				hash.update("<cycle>");
				return;
			}
			if (depth > MAX_FINGERPRINT_DEPTH) {
				hash.update("<deep>");
				return;
			}
			if (ArrayBuffer.isView(obj)) {
				const bytes = new Uint8Array(obj.buffer, obj.byteOffset, obj.byteLength);
				hash.update(`B${obj.constructor?.name ?? ""}${bytes.length}:`);
				hash.update(bytes);
				return;
			}
			if (obj instanceof Date) {
				updateNumber(hash.update("D"), obj.getTime());
				return;
			}
			onPath.add(obj);
			if (Array.isArray(obj)) {
				hash.update(`[${obj.length}:`);
				stack.push({ kind: "array", value: obj, i: 0, depth: depth + 1 });
			} else if (obj instanceof Map || obj instanceof Set) {
				// Insertion order: a Map's keys may be anything, so there is no canonical sort.
				const entries = obj instanceof Map ? [...obj].flat() : [...obj];
				hash.update(`${obj instanceof Map ? "M" : "S"}${obj.size}:`);
				stack.push({ kind: "entries", value: entries, owner: obj, i: 0, depth: depth + 1 });
			} else {
				const keys = Object.keys(obj).sort();
				hash.update(`{${keys.length}:`);
				stack.push({ kind: "object", value: obj, keys, i: 0, depth: depth + 1 });
			}
		} catch {
			// A throwing getter or a revoked proxy: hash a marker, never fail the caller.
			hash.update("<unreadable>");
		}
	};

	visit(value, 0);
	while (stack.length > 0) {
		const frame = stack[stack.length - 1];
		const length = frame.kind === "object" ? frame.keys.length : frame.value.length;
		if (frame.i >= length) {
			stack.pop();
			onPath.delete(frame.kind === "entries" ? frame.owner : frame.value);
			hash.update(";");
			continue;
		}
		const i = frame.i++;
		if (frame.kind === "object") {
			const key = frame.keys[i];
			updateString(hash, "k", key);
			let child: unknown;
			try {
				child = (frame.value as Record<string, unknown>)[key];
			} catch {
				hash.update("<unreadable>");
				continue;
			}
			visit(child, frame.depth);
		} else {
			visit(frame.value[i], frame.depth);
		}
	}
	return hash.digest("hex").slice(0, 32);
}

/** Nesting shown by a preview before it says `…`. */
const PREVIEW_DEPTH = 8;
/** Characters of an object key shown in a preview. */
const PREVIEW_KEY_CHARS = 40;
/** Elements compared to decide whether an array is uniform (`[n × shape]`). */
const UNIFORM_PROBE = 8;

/** Same kind of thing, ignoring string lengths: decides `[n × shape]` against listing elements. */
function sameKind(a: unknown, b: unknown): boolean {
	if (a === null || b === null) return a === b;
	if (typeof a !== typeof b) return false;
	if (typeof a !== "object") return true;
	if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b);
	const ka = Object.keys(a as object);
	const kb = Object.keys(b as object);
	return ka.length === kb.length && ka.every((k, i) => k === kb[i]);
}

/**
 * A bounded description of `value`'s shape: keys, types, string lengths, array counts. Long strings
 * are never copied (only their length is read), and the result is at most `maxChars` characters.
 */
export function structuralPreview(value: unknown, maxChars = 200): string {
	if (!(maxChars > 0)) return "";
	let out = "";
	let full = false;
	const onPath = new Set<object>();
	const emit = (s: string): boolean => {
		if (full) return false;
		if (out.length + s.length > maxChars) {
			full = true;
			return false;
		}
		out += s;
		return true;
	};

	const walk = (v: unknown, depth: number): void => {
		if (full) return;
		try {
			switch (typeof v) {
				case "string":
					emit(`str(${v.length})`);
					return;
				case "number":
				case "boolean":
				case "bigint":
				case "symbol":
				case "undefined":
					emit(typeof v === "number" ? "num" : typeof v === "boolean" ? "bool" : typeof v);
					return;
				case "function":
					emit("fn");
					return;
			}
			if (v === null) {
				emit("null");
				return;
			}
			const obj = v as object;
			if (onPath.has(obj)) {
				emit("<cycle>");
				return;
			}
			if (depth >= PREVIEW_DEPTH) {
				emit(Array.isArray(obj) ? "[…]" : "{…}");
				return;
			}
			if (ArrayBuffer.isView(obj)) {
				emit(`bytes(${obj.byteLength})`);
				return;
			}
			onPath.add(obj);
			try {
				if (Array.isArray(obj)) walkArray(obj, depth);
				else walkObject(obj, depth);
			} finally {
				onPath.delete(obj);
			}
		} catch {
			emit("<unreadable>");
		}
	};

	const walkArray = (arr: unknown[], depth: number): void => {
		const n = arr.length;
		if (n === 0) {
			emit("[]");
			return;
		}
		const probe = Math.min(n, UNIFORM_PROBE);
		let uniform = n > 1;
		for (let i = 1; i < probe && uniform; i++) uniform = sameKind(arr[0], arr[i]);
		if (uniform) {
			if (!emit(`[${n} × `)) return;
			walk(arr[0], depth + 1);
			emit("]");
			return;
		}
		emit("[");
		for (let i = 0; i < n && !full; i++) {
			if (i > 0) emit(", ");
			walk(arr[i], depth + 1);
		}
		emit("]");
	};

	const walkObject = (obj: object, depth: number): void => {
		const keys = Object.keys(obj);
		if (!emit("{")) return;
		for (let i = 0; i < keys.length && !full; i++) {
			const key = keys[i];
			const shown = key.length > PREVIEW_KEY_CHARS ? `${key.slice(0, PREVIEW_KEY_CHARS)}…` : key;
			if (!emit(`${i > 0 ? ", " : ""}${shown}: `)) return;
			walk((obj as Record<string, unknown>)[key], depth + 1);
		}
		emit("}");
	};

	walk(value, 0);
	if (!full) return out;
	// Out of budget: cut and mark, still within maxChars, never between the halves of a surrogate pair.
	let cut = out.slice(0, maxChars - 1);
	const last = cut.charCodeAt(cut.length - 1);
	if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
	return `${cut}…`;
}
