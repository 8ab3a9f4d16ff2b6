/**
 * A terminal program's output stream as plain text: escape sequences (colours, cursor keys, title
 * changes, bracketed-paste switches) dropped, a carriage return starting its line over (a progress
 * bar leaves its last state), a backspace taking back the character before it. What a program draws
 * with cursor moves is not a stream: screen.ts gives its current screen instead.
 */

/** CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), DCS/SOS/PM/APC strings, and two-byte escapes. */
const ESCAPES =
	/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[ -/]*[0-~]|\x9b[0-?]*[ -/]*[@-~]/g;

/** Sequences that place the cursor or switch to the alternate screen: the output is a drawing. */
const DRAWING = /\x1b\[(?:\?(?:1049|1047|47)h|[0-9;]*[HfdJ])/;

export function isDrawing(raw: string): boolean {
	return DRAWING.test(raw);
}

export function plainText(raw: string): string {
	const stripped = raw.replace(ESCAPES, "");
	const out: string[] = [];
	for (const line of stripped.split("\n")) {
		// "\r\n" is a line end; a lone "\r" returns to the line's start and what follows overwrites.
		const body = line.endsWith("\r") ? line.slice(0, -1) : line;
		let shown = "";
		for (const part of body.split("\r")) shown = part + shown.slice(part.length);
		let kept = "";
		for (const ch of shown) {
			if (ch === "\b") kept = kept.slice(0, -1);
			else if (ch === "\t" || ch >= " ") kept += ch;
		}
		out.push(kept);
	}
	return out.join("\n");
}
