/**
 * The latest scan's entries by absolute path, with each directory's children at hand: a partial
 * scan relists one directory and forgets what was below a replaced one in time proportional to
 * those entries, not to the whole tree (a tree of 20,000 files is walked once, not per call).
 */
import type { ScannedEntry } from "./types.js";

function parentOf(path: string): string {
	return path.slice(0, path.lastIndexOf("/"));
}

export class TreeIndex extends Map<string, ScannedEntry> {
	/**
	 * Every ancestor of an entry → the paths directly below it that are entries or have entries
	 * below them, so an entry whose parent directory is not itself an entry is still found.
	 * Initialised after Map's constructor, which is never given entries here (it would call set).
	 */
	private readonly links = new Map<string, Set<string>>();

	override set(path: string, entry: ScannedEntry): this {
		if (!super.has(path)) this.link(path);
		return super.set(path, entry);
	}

	override delete(path: string): boolean {
		if (!super.delete(path)) return false;
		this.unlinkIfBare(path);
		return true;
	}

	override clear(): void {
		super.clear();
		this.links.clear();
	}

	/** The entries directly below `dir`, as a copy (the caller may change the index meanwhile). */
	childrenOf(dir: string): string[] {
		return [...(this.links.get(dir) ?? [])].filter((p) => super.has(p));
	}

	/** Every entry below `dir`. */
	below(dir: string): string[] {
		const found: string[] = [];
		const pending = [dir];
		for (let d = pending.pop(); d !== undefined; d = pending.pop()) {
			for (const p of this.links.get(d) ?? []) {
				if (super.has(p)) found.push(p);
				if (this.links.has(p)) pending.push(p);
			}
		}
		return found;
	}

	/** Link `path` under its parent, and the parent under its own, up to the first already linked. */
	private link(path: string): void {
		for (
			let child = path, parent = parentOf(child);
			parent !== child;
			child = parent, parent = parentOf(child)
		) {
			const kids = this.links.get(parent);
			if (kids) {
				kids.add(child);
				return;
			}
			this.links.set(parent, new Set([child]));
		}
	}

	/** Unlink `path` if it is neither an entry nor above one, and so on up. */
	private unlinkIfBare(path: string): void {
		for (
			let child = path, parent = parentOf(child);
			parent !== child;
			child = parent, parent = parentOf(child)
		) {
			if (super.has(child) || this.links.has(child)) return;
			const kids = this.links.get(parent);
			kids?.delete(child);
			if (kids && kids.size > 0) return;
			this.links.delete(parent);
		}
	}
}
