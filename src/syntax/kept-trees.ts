/**
 * The parse trees a session keeps for incremental re-parsing, by the text they parse. Apart from
 * the check because its bounds (count and characters) and its ownership rule (the cache deletes
 * the trees, never a caller) are one concern the check only uses.
 */

import { createHash } from "node:crypto";
import type { Tree } from "web-tree-sitter";

/** Parse trees kept for incremental re-parsing: at most this many, of at most this many characters in all. */
const MAX_KEPT_TREES = 16;
const MAX_KEPT_CHARS = 4 * 1024 * 1024;

/** The key of a text's tree: its grammar and the SHA-256 of the text. */
export function treeKey(language: string, text: string): string {
	return `${language}:${createHash("sha256").update(text).digest("base64")}`;
}

/**
 * Parse trees by the text they parse, least recently used first, bounded in count and in the
 * characters parsed (a tree's WebAssembly memory grows with its text). The cache owns its trees:
 * a tree it returns is used before the next await, and never deleted by the caller.
 */
export class TreeCache {
	private readonly trees = new Map<string, { tree: Tree; chars: number }>();
	private chars = 0;

	get(key: string): Tree | undefined {
		const kept = this.trees.get(key);
		if (!kept) return undefined;
		this.trees.delete(key);
		this.trees.set(key, kept);
		return kept.tree;
	}

	put(key: string, tree: Tree, chars: number): void {
		const prior = this.trees.get(key);
		if (prior) {
			this.trees.delete(key);
			this.chars -= prior.chars;
			if (prior.tree !== tree) prior.tree.delete();
		}
		this.trees.set(key, { tree, chars });
		this.chars += chars;
		for (const [oldest, kept] of this.trees) {
			if (oldest === key || (this.trees.size <= MAX_KEPT_TREES && this.chars <= MAX_KEPT_CHARS)) break;
			kept.tree.delete();
			this.chars -= kept.chars;
			this.trees.delete(oldest);
		}
	}

	clear(): void {
		for (const kept of this.trees.values()) kept.tree.delete();
		this.trees.clear();
		this.chars = 0;
	}
}
