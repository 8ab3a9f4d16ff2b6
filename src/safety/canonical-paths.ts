/** Containment tests for paths: any absolute paths (isWithin), and canonical ones (under, below). */
import { posix } from "node:path";

/** True when `child` is `parent` or below it, compared by path components. */
export function isWithin(parent: string, child: string): boolean {
	if (parent === child) return true;
	const rel = posix.relative(parent, child);
	if (rel === "") return true;
	if (posix.isAbsolute(rel)) return false;
	const first = rel.split("/", 1)[0];
	return first !== "..";
}

/**
 * isWithin for canonical paths (absolute, normalized, as `canonicalize` and the roots are): a
 * prefix test on a component boundary, without posix.relative's normalization of both sides.
 */
export function under(parent: string, child: string): boolean {
	return child === parent || (child.startsWith(parent) && (parent === "/" || child[parent.length] === "/"));
}

/** posix.relative(parent, child) for a canonical `child` that is `parent` or below it. */
export function below(parent: string, child: string): string {
	if (child === parent) return "";
	return child.slice(parent === "/" ? 1 : parent.length + 1);
}
