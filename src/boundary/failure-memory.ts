/**
 * Failure memory: what a session remembers about failed calls.
 *
 * Each failure is kept as (tool, fingerprint of the arguments, code, retry class) in a window of the
 * last FAILURE_WINDOW failures: constant memory, and never the arguments themselves, so a failed
 * 20 MB write leaves 32 hex chars behind, not 20 MB. From that window come directives:
 * - a "change-approach" failure gets one bounded sentence naming the tool, the code and what to do
 *   instead of repeating the call;
 * - the same (tool, fingerprint) failing again within the window, whatever its retry class, gets a
 *   directive saying that this exact call has failed N times and must not be repeated.
 * A later success of the same (tool, fingerprint) clears its count.
 *
 * Expiry: the directive travels on the failing call's result (`error.directive`), and `pending()`
 * returns it until `endTurn()` (hosts with turns call it when the model's turn ends) or, for hosts
 * without turns, until the next call on the session starts (`beginCall()`), whichever comes first.
 * By then the model has seen it in the failing call's result.
 */
import { ERROR_CATALOGUE, type ErrorCode, type RetryClass } from "./errors.js";
import { fingerprint } from "./fingerprint.js";

/** Failures remembered for loop detection. */
export const FAILURE_WINDOW = 32;
/** Upper bound of a directive's length. */
export const MAX_DIRECTIVE_CHARS = 500;
/** Tool names are the model's input too (an unknown tool): kept to this many characters. */
const MAX_TOOL_CHARS = 64;

/** One failed call as the failure memory keeps it: the tool, the arguments' fingerprint and the code, never the arguments. */
export interface FailureRecord {
	readonly tool: string;
	readonly fingerprint: string;
	readonly code: ErrorCode;
	readonly retry: RetryClass;
}

/** What to do instead, per code; codes not listed fall back to their retry class. */
const ADVICE: Partial<Record<ErrorCode, string>> = {
	NO_MATCH: "Re-read the file and anchor the edit on text that is in it now.",
	AMBIGUOUS_MATCH:
		"Re-read the file and anchor the edit on text that is there and unique: include surrounding lines.",
	EDIT_OVERLAP: "Merge the overlapping edits into one, or make them separate calls.",
	NO_CHANGE: "The replacement equals the original text: check whether the change is already there.",
	ENCODING_UNSAFE:
		"Do not retry the text edit: the file cannot be edited safely as UTF-8 text; use a different tool or approach.",
	PLACEHOLDER_TEXT:
		"Write out the code the placeholder stood for, or edit only the lines that change with an anchor around them.",
	SYNTAX_ERROR:
		"Fix the syntax error the change introduced (the error names its line), then send the change again.",
	BINARY_FILE: "The file is binary: do not treat it as text; use a different tool or approach.",
	OFFSET_OUT_OF_RANGE: "Use an offset within the file's length.",
	INVALID_ARGS: "Fix the arguments to match the tool's schema; the error names each problem.",
	UNKNOWN_TOOL: "Call one of the available tools instead.",
	COMMAND_FAILED: "Read the command's output and fix the cause; do not rerun the command unchanged.",
	COMMAND_REFUSED: "The command is refused by policy; do the task another way.",
	INVALID_PATTERN: "Fix the pattern, or escape it and search for a literal string.",
	TOO_LARGE: "Work on a smaller part (an offset and limit, a narrower path) or with a script through bash.",
	TIMEOUT:
		"Make the command finish sooner (narrow its scope, run it in the background) or raise the timeout.",
	STALE_READ: "Read the file again before writing it.",
	NOT_READ: "Read the file before writing it.",
	CHANGED_ON_DISK: "Another writer is changing the file: read it again and decide whether to edit it at all.",
};

const CLASS_ADVICE: Record<RetryClass, string> = {
	"change-approach": "Change the approach instead of repeating the call.",
	retry: "Retrying it unchanged has not helped: change the call or do something else first.",
	retarget: "Use a different path or target.",
};

/** A tool name fit for a directive: printable, at most MAX_TOOL_CHARS, distinct names kept distinct. */
function toolLabel(name: string): string {
	const printable = (s: string) => s.replace(/[^\x20-\x7e]/g, "?");
	if (name.length <= MAX_TOOL_CHARS) return printable(name);
	return `${printable(name.slice(0, MAX_TOOL_CHARS - 12))}...${fingerprint(name).slice(0, 8)}`;
}

function clip(s: string): string {
	return s.length <= MAX_DIRECTIVE_CHARS ? s : `${s.slice(0, MAX_DIRECTIVE_CHARS - 1)}…`;
}

/** The directive for a failure seen `count` times in the window, or undefined when none is due. */
function directiveFor(r: FailureRecord, count: number): string | undefined {
	// An abort is the host's or the user's doing, not the model's approach.
	if (r.code === "ABORTED") return undefined;
	const advice = ADVICE[r.code] ?? CLASS_ADVICE[r.retry];
	if (count >= 2) {
		return clip(
			`This exact ${r.tool} call has failed ${count} times (last: ${r.code}); do not repeat it. ${advice}`,
		);
	}
	if (r.retry !== "change-approach") return undefined;
	return clip(`${r.tool} failed with ${r.code}: change approach rather than repeat the call. ${advice}`);
}

/** One session's failure memory (owned by the Session, nothing module-global). */
export class FailureMemory {
	private readonly window: FailureRecord[] = [];
	private pendingDirective: string | undefined;

	constructor(private readonly size = FAILURE_WINDOW) {}

	/** A call starts: a directive already surfaced expires (the rule for hosts without turns). */
	beginCall(): void {
		this.pendingDirective = undefined;
	}

	/** Remember a failed call (never its arguments) and return the directive for it, if any. */
	recordFailure(tool: string, args: unknown, error: { code: ErrorCode }): string | undefined {
		const record: FailureRecord = {
			tool: toolLabel(tool),
			fingerprint: fingerprint(args),
			code: error.code,
			retry: ERROR_CATALOGUE[error.code],
		};
		this.window.push(record);
		if (this.window.length > this.size) this.window.shift();
		const directive = directiveFor(record, this.countOf(record.tool, record.fingerprint));
		if (directive) this.pendingDirective = directive;
		return directive;
	}

	/** A call succeeded: its (tool, fingerprint) loses its failure count. */
	recordSuccess(tool: string, args: unknown): void {
		const label = toolLabel(tool);
		// Fingerprinting costs a pass over the arguments: only when this tool has failures to clear.
		if (!this.window.some((r) => r.tool === label)) return;
		const fp = fingerprint(args);
		for (let i = this.window.length - 1; i >= 0; i--) {
			const r = this.window[i];
			if (r.tool === label && r.fingerprint === fp) this.window.splice(i, 1);
		}
	}

	/** How many failures of (tool, fingerprint) the window holds; aborts are not counted. */
	count(tool: string, fp: string): number {
		return this.countOf(toolLabel(tool), fp);
	}

	private countOf(label: string, fp: string): number {
		let n = 0;
		for (const r of this.window) if (r.tool === label && r.fingerprint === fp && r.code !== "ABORTED") n++;
		return n;
	}

	/** The directive for the model's next turn, until it expires. */
	pending(): string | undefined {
		return this.pendingDirective;
	}

	/** The model's turn is over: the pending directive expires. */
	endTurn(): void {
		this.pendingDirective = undefined;
	}

	/** The remembered failures, oldest first (a copy). */
	records(): FailureRecord[] {
		return [...this.window];
	}
}
