/**
 * Omission placeholders: a line of new text that stands for code the model did not write out
 * ("// ... rest of code unchanged", "# existing code here", "/* ... *\/ unchanged"). Written to
 * disk it deletes that code, so a change whose new text brings one in is refused. Only whole-line
 * comments count (a trailing comment after code is code), and only ones the replaced text did not
 * already hold: a file that has such a comment may keep it.
 *
 * A bare `...` is not a placeholder: it is Python's Ellipsis, a stub body, a spread. A comment that
 * is only an ellipsis, or an ellipsis with words of omission, or one of the set phrases below, is.
 */
import { KeelError } from "../boundary/errors.js";

/** A whole-line comment: its opener, then the body up to an optional closer. */
const COMMENT = /^\s*(?:\/\/+|#+|--|;+|\/\*+|\*|<!--|\{\/\*+|'|%|rem\s)\s*(.*?)\s*(?:\*+\/\}?|-->)?\s*$/i;

/** Any ellipsis: three dots, the ellipsis character, or more dots. */
const ELLIPSIS = /\.{3,}|…/;

const THING =
	"(?:code|file|function|functions|class|classes|method|methods|module|implementation|body|content|contents|component|components|imports|tests|config|configuration|logic|fields|properties|cases|styles|lines|definitions|handlers|routes|props|members|helpers|setup|markup)";

/** Set phrases that mean "the rest is as it was", with or without an ellipsis. */
const PHRASE = new RegExp(
	[
		// rest of the code [unchanged]
		`^(?:the )?(?:rest|remainder) of (?:the )?(?:\\w+ ){0,2}?${THING}(?: (?:is |are |remains? |stays? |goes |as )?(?:unchanged|the same|as before|as is|is|here|omitted|below|above|follows))*$`,
		// existing code here, previous implementation unchanged, keep existing imports
		`^(?:keep(?:s|ing)? )?(?:the |all )?(?:existing|previous|original|other|remaining|unchanged|same|old|earlier) (?:\\w+ ){0,2}?${THING}(?: (?:is |are |remains? |stays? |goes |go )?(?:unchanged|the same|as before|as is|here|omitted|elided|for brevity|intact|remain|follow|below|above))*$`,
		// code unchanged, implementation omitted for brevity
		`^(?:\\w+ ){0,2}?${THING} (?:is |are |remains? |stays? |left )?(?:unchanged|omitted|elided|the same|as before|intact)(?: for brevity| here)?$`,
		"^(?:unchanged|omitted(?: for brevity)?|same as before|no changes?(?: here)?|as before)$",
	].join("|"),
);

/** Words of omission that, next to an ellipsis, make a comment a placeholder. */
const OMISSION =
	/\b(?:rest|remainder|remaining|existing|unchanged|same|previous|original|omitted|elided|other|etc|more|brevity|here|before|above|below|as is|intact|snip|truncated|skipped|continues?)\b/;

/** The words of a comment body, lower case, without ellipses, brackets or punctuation. */
function words(body: string): string {
	return body
		.toLowerCase()
		.replace(/\.{2,}|…/g, " ")
		.replace(/[[\](){}<>:;,.!*=_`"'-]+/g, " ")
		.replace(/\s+/g, " ")
		.trim();
}

/** Whether one line of new text is an omission placeholder. */
export function isPlaceholder(line: string): boolean {
	if (line.length > 160) return false;
	const m = COMMENT.exec(line);
	if (!m) return false;
	const body = m[1];
	const w = words(body);
	if (ELLIPSIS.test(body)) return w === "" || OMISSION.test(w) || PHRASE.test(w);
	return w !== "" && PHRASE.test(w);
}

/** A cheap first pass: lines with an ellipsis or a telling word (a 2,000-line write is scanned once). */
const CANDIDATE =
	/\.{3}|…|unchanged|existing|rest of|remainder|omitted|previous|original|same|as before|here/i;

/**
 * The first placeholder line of `after` (1-based within it) whose text does not appear as a line
 * of `before`; undefined when there is none.
 */
export function introducedPlaceholder(
	before: string,
	after: string,
): { line: number; text: string } | undefined {
	if (!CANDIDATE.test(after)) return undefined;
	let had: Set<string> | undefined;
	const lines = after.split("\n");
	for (let i = 0; i < lines.length; i++) {
		if (!isPlaceholder(lines[i])) continue;
		had ??= new Set(before.split("\n").map((l) => l.trim()));
		if (!had.has(lines[i].trim())) return { line: i + 1, text: lines[i].trim() };
	}
	return undefined;
}

/**
 * Throws PLACEHOLDER_TEXT when `after` brings in a placeholder `before` did not have. `what` names
 * the text in the message ("edits[0].newText", "content", "the patch for a.py").
 */
export function refusePlaceholder(before: string, after: string, what: string, path: string): void {
	const found = introducedPlaceholder(before, after.replace(/\r\n?/g, "\n"));
	if (!found) return;
	throw new KeelError(
		"PLACEHOLDER_TEXT",
		`Line ${found.line} of ${what} (${JSON.stringify(found.text)}) stands for code that is left out; written to ${path} it would delete that code. Nothing was written. Send the complete text (or edit only the lines that change, with an anchor around them).`,
		{ path, details: { placeholder: found.text, line: found.line } },
	);
}
