/** Schema validation with errors a model can act on. */
import type { TSchema } from "typebox";
import { Compile } from "typebox/compile";
import { KeelError } from "./errors.js";

export type Checker = (args: unknown) => void;

/** Compile once per schema; the returned checker throws INVALID_ARGS naming each problem. */
export function compileChecker(toolName: string, schema: TSchema): Checker {
	const compiled = Compile(schema);
	return (args: unknown) => {
		if (args === null || typeof args !== "object" || Array.isArray(args)) {
			throw new KeelError("INVALID_ARGS", `Arguments for ${toolName} must be a JSON object.`);
		}
		if (compiled.Check(args)) return;
		const problems: string[] = [];
		for (const err of compiled.Errors(args)) {
			const e = err as { keyword: string; instancePath: string; message: string; params: Record<string, unknown> };
			if (e.keyword === "boolean") continue; // reported again by the additionalProperties entry
			const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, ".") : "";
			if (e.keyword === "additionalProperties") {
				const extra = (e.params.additionalProperties as string[] | undefined) ?? [];
				problems.push(`unexpected field${extra.length > 1 ? "s" : ""} ${extra.map((x) => `"${x}"`).join(", ")}${where ? ` in ${where}` : ""}`);
			} else if (e.keyword === "required") {
				const missing = (e.params.requiredProperties as string[] | undefined) ?? [];
				problems.push(`missing required field${missing.length > 1 ? "s" : ""} ${missing.map((x) => `"${x}"`).join(", ")}${where ? ` in ${where}` : ""}`);
			} else {
				problems.push(`${where || "arguments"} ${e.message}`);
			}
			if (problems.length >= 5) break;
		}
		throw new KeelError("INVALID_ARGS", `Invalid arguments for ${toolName}: ${problems.join("; ")}.`);
	};
}
