/**
 * MCP roots → keel session options. The client's file:// roots that are existing directories replace
 * the server's workspace root and extra read-write roots (the first becomes the workspace root, where
 * relative paths resolve); the server's read-only roots (--allow-read) stay, resolved against the
 * server's own root so their meaning does not change.
 *
 * Only for a backend that spawns here (local): a client's roots name paths on the client's machine,
 * which say nothing about a remote backend's files, and a sandbox's binds are fixed when it starts.
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Root } from "@modelcontextprotocol/sdk/types.js";
import type { SessionOptions } from "../../session.js";

export function clientRootsApply(base: SessionOptions): boolean {
	return base.backend === undefined || base.backend.spawnsHere === true;
}

async function isDirectory(path: string): Promise<boolean> {
	try {
		return (await stat(path)).isDirectory();
	} catch {
		return false;
	}
}

/** Existing directories named by file:// roots, in the client's order, without duplicates. */
export async function rootDirectories(roots: readonly Root[]): Promise<string[]> {
	const dirs: string[] = [];
	for (const r of roots) {
		if (!r.uri.startsWith("file://")) continue;
		let path: string;
		try {
			path = fileURLToPath(r.uri);
		} catch {
			continue; // a file URL with a host or bad escapes
		}
		if (!dirs.includes(path) && (await isDirectory(path))) dirs.push(path);
	}
	return dirs;
}

/** Session options with the client's roots, or undefined when none of them is usable. */
export async function optionsWithRoots(
	base: SessionOptions,
	roots: readonly Root[],
): Promise<SessionOptions | undefined> {
	const dirs = await rootDirectories(roots);
	if (dirs.length === 0) return undefined;
	const serverRoot = resolve(base.root ?? process.cwd());
	return {
		...base,
		root: dirs[0],
		allow: dirs.slice(1),
		allowRead: base.allowRead?.map((p) => resolve(serverRoot, p)),
	};
}
