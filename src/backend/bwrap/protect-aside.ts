/**
 * After a command in the sandbox: protected paths that did not exist before it and do now are
 * moved aside to NAME.keel-refused-XXXX in their own directory (never deleted), through a handle
 * on that directory opened from the guard's pinned roots without following a link, so a directory
 * swapped for a link makes keel refuse rather than act outside. The scan itself is protect.ts.
 */
import { randomBytes } from "node:crypto";
import { lstatSync, renameSync } from "node:fs";
import { realpath as realpathAt } from "node:fs/promises";
import { posix } from "node:path";
import { isDotGit } from "../../safety/protected-paths.js";
import type { DirPins } from "../local/pin.js";
import { atPinned, type ProtectedScan, typeAt, within } from "./protect.js";

/**
 * After a command: protected paths that did not exist before and do now are moved aside (renamed in
 * their directory, never deleted). Returns one line per path, for the command's output.
 */
export async function moveAsideCreated(
	before: ProtectedScan,
	after: ProtectedScan,
	pins?: DirPins,
): Promise<string[]> {
	const had = new Set(before.existing);
	const created = [...before.absent, ...after.existing].filter((p) => !had.has(p));
	const notes: string[] = [];
	const createdSet = new Set(created);
	for (const p of createdSet) {
		if ((await typeAt(p)) === undefined) continue;
		// Reached through a link: never acted on by that name. Its canonical path, when in the list
		// too, is moved aside itself; otherwise the note says it stays.
		const canonical = await realpathAt(p).catch(() => p);
		if (canonical !== p) {
			if (!createdSet.has(canonical))
				notes.push(`keel: ${p} is protected and was created by the command; it could not be moved aside.`);
			continue;
		}
		if (before.existing.some((q) => within(q, p))) continue; // inside a read-only mount: made before
		// A repository the command created (git init, clone, worktree add) is its own: not moved.
		if (isDotGit(posix.basename(p))) continue;
		if (after.gitDirs.some((g) => within(g, p) && !before.gitDirs.includes(g))) continue;
		const name = posix.basename(p);
		const asideName = `${name}.keel-refused-${randomBytes(4).toString("hex")}`;
		const aside = posix.join(posix.dirname(p), asideName);
		// Renamed within its directory's handle: the entry itself (a link is moved, not followed).
		const moved = atPinned(pins, posix.dirname(p), (dir) => {
			if (!lstatSync(dir.at(name), { throwIfNoEntry: false })) throw new Error("gone");
			renameSync(dir.at(name), dir.at(asideName));
		});
		notes.push(
			moved
				? `keel: ${p} is protected and was created by the command; it was moved to ${aside}.`
				: `keel: ${p} is protected and was created by the command; it could not be moved aside.`,
		);
	}
	return notes;
}
