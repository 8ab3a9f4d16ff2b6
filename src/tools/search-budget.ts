/** grep and find under the search time budget (LocalBackendOptions.searchBudgetMs). */
import { KeelError } from "../boundary/errors.js";
import type { ToolResult } from "./types.js";

/** A search stopped by its time budget answers TIMEOUT, carrying what it had found. */
export function timedOutOr<D>(
	tool: string,
	timedOut: boolean | undefined,
	result: ToolResult<D>,
): ToolResult<D> {
	if (!timedOut) return result;
	const found = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
	throw new KeelError(
		"TIMEOUT",
		`${tool} stopped at its time budget; narrow the path, glob or pattern. Found until then:\n\n${found}`,
	);
}
