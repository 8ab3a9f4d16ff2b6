/**
 * Which grammar checks which file: the table of file endings keel has a grammar for. Apart from
 * the check so that a new language is one line here, and so that asking whether a file is checked
 * loads nothing of tree-sitter.
 */

/** The grammar for a file, by its extension (or name). */
const BY_EXTENSION: Record<string, string> = {
	ts: "typescript",
	mts: "typescript",
	cts: "typescript",
	tsx: "tsx",
	js: "javascript",
	mjs: "javascript",
	cjs: "javascript",
	jsx: "javascript",
	py: "python",
	pyi: "python",
	go: "go",
	rs: "rust",
	java: "java",
	c: "c",
	h: "cpp",
	cc: "cpp",
	cpp: "cpp",
	cxx: "cpp",
	hh: "cpp",
	hpp: "cpp",
	hxx: "cpp",
	cs: "c_sharp",
	rb: "ruby",
	php: "php",
	sh: "bash",
	bash: "bash",
	json: "json",
	yml: "yaml",
	yaml: "yaml",
	toml: "toml",
	html: "html",
	htm: "html",
	css: "css",
};

/** The grammar that checks `path`, or undefined when keel has none for it. */
export function languageFor(path: string): string | undefined {
	const base = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
	const dot = base.lastIndexOf(".");
	if (dot <= 0) return undefined;
	return BY_EXTENSION[base.slice(dot + 1)];
}
