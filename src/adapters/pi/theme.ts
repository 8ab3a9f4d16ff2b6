/** The part of pi's Theme the renderers use (structural, so tests pass a plain object). */
export type ThemeColor =
	| "accent"
	| "success"
	| "error"
	| "warning"
	| "muted"
	| "dim"
	| "toolTitle"
	| "toolOutput"
	| "toolDiffAdded"
	| "toolDiffRemoved"
	| "toolDiffContext";

export interface ThemeLike {
	fg(color: ThemeColor, text: string): string;
	bold(text: string): string;
}

/** No colors: for tests and plain output. */
export const plainTheme: ThemeLike = { fg: (_c, t) => t, bold: (t) => t };
