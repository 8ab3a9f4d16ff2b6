/** Containment tests for canonical paths (absolute, normalized: what the path guard produces). */

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
