/** A bounded pointer to where a missed anchor probably was. */
import { truncateLine } from "../boundary/truncate.js";

const MAX_HINTS = 3;
const MAX_HINT_CHARS = 120;

/** Lines of `text` that contain the first non-blank line of `anchor` (whitespace-trimmed). */
export function nearestLines(text: string, anchor: string): string {
	const probe = anchor
		.split("\n")
		.map((l) => l.trim())
		.find((l) => l.length > 0);
	if (!probe) return "";
	const hits: string[] = [];
	const lines = text.split("\n");
	for (let i = 0; i < lines.length && hits.length < MAX_HINTS; i++) {
		if (lines[i].includes(probe)) hits.push(`${i + 1}: ${truncateLine(lines[i].trim(), MAX_HINT_CHARS).text}`);
	}
	if (hits.length === 0) return " Read the file again to see its current text.";
	return ` The first anchor line appears at line ${hits.map((h) => h).join("; line ")}. Read those lines and copy them exactly.`;
}
