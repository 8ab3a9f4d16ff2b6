/**
 * Search on a target without rg/fd: the tree is listed remotely in one call (find -printf), the
 * ignore files are fetched in one more, and the walk, ignore rules, globs and regexes are the JS
 * engine's own (ignore-rules.ts, patterns.ts, semantics.ts), so results match the local engines.
 * grep then fetches file contents in walk order, in batches (base64: framing that survives any
 * byte), and stops once it has one match past the limit. It moves the searched bytes over the
 * transport: fine for a fallback, and the reason rg on the target is preferred.
 *
 * Any backend that can run argv on its target shares this walk through an ExecTransport: the ssh
 * backend runs it over its job shells and only swaps the content search (`contents`) for grep(1)
 * on the host, so the searched bytes stay there. Rooms: fallback-list.ts (listing and fetching),
 * fallback-walk.ts (the walk), this file (grep and find over them).
 */
import { pathFact } from "../../boundary/path-facts.js";
import { compileOverride } from "../search/ignore-rules.js";
import { compileFindMatcher } from "../search/js.js";
import { compileGrepMatcher, loadRe2, type Re2 } from "../search/patterns.js";
import { grepBuffer, throwIfAborted } from "../search/semantics.js";
import type { FindOutcome, FindRequest, GrepMatch, GrepOutcome, GrepRequest, SearchOps } from "../types.js";
import {
	FETCH_MAX_ARG_BYTES,
	FETCH_MAX_BYTES,
	FETCH_MAX_FILES,
	fetchFiles,
	listTree,
} from "./fallback-list.js";
import { walkListing } from "./fallback-walk.js";
import type { ExecTransport } from "./transport.js";

/** A file the walk kept for grep: absolute path and size (for batching). */
export interface SearchFile {
	abs: string;
	size: number;
}

/**
 * Searches the contents of the files the walk kept (in walk order) and gives their first `max`
 * matches, in order. Made once per request, before the walk, so a bad pattern fails early.
 */
export type ContentSearch = (
	req: GrepRequest,
	re2: Re2,
) => (files: readonly SearchFile[], max: number) => Promise<GrepMatch[]>;

/** The default content search: contents fetched in batches, matched with the JS engine's regex. */
function fetchedContents(transport: ExecTransport): ContentSearch {
	return (req, re2) => {
		const regex = compileGrepMatcher(req, re2);
		return async (files, max) => {
			const found: GrepMatch[] = [];
			for (let i = 0; i < files.length && found.length < max; ) {
				// Batches bounded by file count, content bytes and argument bytes (ARG_MAX).
				const batch: string[] = [];
				let bytes = 0;
				let argBytes = 0;
				while (
					i < files.length &&
					(batch.length === 0 ||
						(batch.length < FETCH_MAX_FILES && bytes < FETCH_MAX_BYTES && argBytes < FETCH_MAX_ARG_BYTES))
				) {
					batch.push(files[i].abs);
					bytes += files[i].size;
					argBytes += Buffer.byteLength(files[i].abs) + 1;
					i++;
				}
				const got = await fetchFiles(transport, batch, req.signal);
				for (let k = 0; k < batch.length && found.length < max; k++) {
					const b = got[k];
					if (b) found.push(...grepBuffer(batch[k], b, regex, req.context, max - found.length));
				}
			}
			return found;
		};
	};
}

async function fallbackGrep(
	transport: ExecTransport,
	contents: ContentSearch,
	engine: string,
	req: GrepRequest,
): Promise<GrepOutcome> {
	const re2 = await loadRe2();
	const search = contents(req, re2);
	const override = req.glob ? compileOverride(req.glob, re2) : undefined;
	const listing = await listTree(transport, req.path, ".rgignore", req.signal);
	// A file named explicitly is searched whatever the ignore rules and glob say.
	const files = listing.isFile
		? [{ abs: req.path, size: 0 }]
		: (await walkListing(transport, req.path, ".rgignore", listing, override, req.signal, re2)).filter(
				(e) => e.kind === "file",
			);
	const found = await search(files, req.limit + 1);
	throwIfAborted(req.signal);
	return { matches: found.slice(0, req.limit), limitReached: found.length > req.limit, engine };
}

async function fallbackFind(
	transport: ExecTransport,
	engine: string,
	req: FindRequest,
): Promise<FindOutcome> {
	const re2 = await loadRe2();
	const matches = compileFindMatcher(req.pattern, re2);
	const listing = await listTree(transport, req.path, ".fdignore", req.signal);
	if (listing.isFile) throw pathFact("not-a-directory", req.path);
	const entries = await walkListing(transport, req.path, ".fdignore", listing, undefined, req.signal, re2);
	const paths: string[] = [];
	for (const e of entries) {
		if (!matches(e.rel, e.name)) continue;
		paths.push(e.kind === "dir" ? `${e.rel}/` : e.rel);
		if (paths.length > req.limit) break;
	}
	throwIfAborted(req.signal);
	return { paths: paths.slice(0, req.limit), limitReached: paths.length > req.limit, engine };
}

export interface FallbackSearchOptions {
	/** Engine names the outcomes report (default "exec-fallback" for both). */
	engine?: { grep: string; find: string };
	/** How grep searches file contents (default: fetched over the transport, matched in JS). */
	contents?: ContentSearch;
}

export function createFallbackSearch(transport: ExecTransport, opts: FallbackSearchOptions = {}): SearchOps {
	const engine = opts.engine ?? { grep: "exec-fallback", find: "exec-fallback" };
	const contents = opts.contents ?? fetchedContents(transport);
	return {
		grep: (req) => fallbackGrep(transport, contents, engine.grep, req),
		find: (req) => fallbackFind(transport, engine.find, req),
	};
}
