/**
 * The bash grammar (tree-sitter's, prebuilt as WebAssembly, through syntax/grammars.ts), loaded on
 * first use: paid once per process and only by a process that runs bash. A parse after that costs a
 * fraction of a millisecond.
 */
import type { Node } from "web-tree-sitter";
import { Grammars } from "../syntax/grammars.js";

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
	const parser = await new Grammars().parser("bash");
	if (!parser) throw new Error("the bash grammar is not installed");
	return (source) => {
		const tree = parser.parse(source);
		if (!tree) throw new Error("the bash parser returned no tree");
		return { root: tree.rootNode, free: () => tree.delete() };
	};
}
