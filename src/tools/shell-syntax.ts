/**
 * The bash grammar (tree-sitter's, prebuilt as WebAssembly), loaded on first use: about 60 ms and
 * one parse to warm up, paid once per process and only by a process that runs bash. A parse after
 * that costs a fraction of a millisecond.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Node, Parser } from "web-tree-sitter";

export type { Node as SyntaxNode } from "web-tree-sitter";

/** Parses bash source into a syntax tree's root; `free` releases the tree's memory (WebAssembly). */
export type BashParse = (source: string) => { root: Node; free: () => void };

/** A loader that loads the grammar once and hands out the same parser after; null when it cannot load. */
export function lazyBashParser(): () => Promise<BashParse | null> {
	let loading: Promise<BashParse | null> | undefined;
	return () => {
		loading ??= loadBashParser().catch(() => null);
		return loading;
	};
}

async function loadBashParser(): Promise<BashParse> {
	const { Parser: ParserClass, Language } = await import("web-tree-sitter");
	await ParserClass.init();
	const wasm = createRequire(import.meta.url).resolve("@vscode/tree-sitter-wasm/wasm/tree-sitter-bash.wasm");
	const language = await Language.load(await readFile(wasm));
	const parser: Parser = new ParserClass();
	parser.setLanguage(language);
	return (source) => {
		const tree = parser.parse(source);
		if (!tree) throw new Error("the bash parser returned no tree");
		return { root: tree.rootNode, free: () => tree.delete() };
	};
}
