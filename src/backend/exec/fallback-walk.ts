/**
 * The walk of walk.ts over a listing (fallback-list.ts): the same ignore rules, override globs and
 * order as the local engines, run in keel over what the target listed.
 */
import { isIgnored, joinPath, type Level, type Override, parseIgnoreFile } from "../search/ignore-rules.js";
import type { Re2 } from "../search/patterns.js";
import { ancestorsOf, FETCH_MAX_FILES, fetchFiles, type Kind, type Listing } from "./fallback-list.js";
import type { ExecTransport } from "./transport.js";

/** Rules of a fetched ignore file; an absent file has none. */
const parseIgnoreText = (text: string | undefined, re2: Re2) =>
	text === undefined ? [] : parseIgnoreFile(text, re2);

/** Levels from `/` down to the search root, from the listing's ancestor records. */
function ancestorLevels(root: string, custom: string, l: Listing, re2: Re2): Level {
	let level: Level | undefined;
	for (const dir of ancestorsOf(root)) {
		const p = dir === "/" ? "" : dir;
		const rules = (name: string) => parseIgnoreText(l.files.get(`${p}/${name}`), re2);
		const hasGit = l.gitDirs.has(dir);
		level = {
			dir,
			parent: level,
			hasGit,
			anyGit: hasGit || (level?.anyGit ?? false),
			custom: rules(custom),
			dot: rules(".ignore"),
			git: rules(".gitignore"),
			exclude: hasGit ? rules(".git/info/exclude") : [],
		};
	}
	return level!;
}

export interface Entry {
	abs: string;
	rel: string;
	name: string;
	kind: Kind;
	size: number;
}

/**
 * The walk of walk.ts over a listing: ignore files of directories inside the root are fetched
 * first (one call), then the walk is synchronous.
 */
export async function walkListing(
	transport: ExecTransport,
	root: string,
	custom: string,
	l: Listing,
	override: Override | undefined,
	signal: AbortSignal | undefined,
	re2: Re2,
): Promise<Entry[]> {
	const wanted: string[] = [];
	for (const [dir, nodes] of l.tree) {
		const abs = dir === "" ? root : joinPath(root, dir);
		for (const n of nodes) {
			if ([custom, ".ignore", ".gitignore"].includes(n.name)) wanted.push(joinPath(abs, n.name));
			if (n.name === ".git") wanted.push(joinPath(abs, ".git/info/exclude"));
		}
	}
	const texts = new Map<string, string>();
	for (let i = 0; i < wanted.length; i += FETCH_MAX_FILES) {
		const batch = wanted.slice(i, i + FETCH_MAX_FILES);
		const got = await fetchFiles(transport, batch, signal);
		batch.forEach((p, k) => {
			const b = got[k];
			if (b) texts.set(p, b.toString("utf8"));
		});
	}
	const levelFor = (abs: string, parent: Level, names: Set<string>): Level => {
		const rules = (name: string) =>
			names.has(name) ? parseIgnoreText(texts.get(joinPath(abs, name)), re2) : [];
		const hasGit = names.has(".git");
		return {
			dir: abs,
			parent,
			hasGit,
			anyGit: hasGit || parent.anyGit,
			custom: rules(custom),
			dot: rules(".ignore"),
			git: rules(".gitignore"),
			exclude: hasGit ? parseIgnoreText(texts.get(joinPath(abs, ".git/info/exclude")), re2) : [],
		};
	};
	const out: Entry[] = [];
	const visit = (dirAbs: string, dirRel: string, level: Level) => {
		for (const n of l.tree.get(dirRel) ?? []) {
			if (n.name === ".git") continue;
			const isDir = n.kind === "dir";
			const e = { abs: joinPath(dirAbs, n.name), rel: dirRel ? `${dirRel}/${n.name}` : n.name, ...n };
			const verdict = override?.(e.rel, isDir);
			if (verdict === "ignore") continue;
			if (verdict === undefined && isIgnored(level, e.abs, isDir, custom !== ".fdignore")) continue;
			out.push(e);
			if (isDir) {
				const names = new Set((l.tree.get(e.rel) ?? []).map((c) => c.name));
				visit(e.abs, e.rel, levelFor(e.abs, level, names));
			}
		}
	};
	visit(root, "", ancestorLevels(root, custom, l, re2));
	return out;
}
