/** A workspace tree as a comparable value: every entry's type, mode and bytes or link target. */
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";

export type TreeEntry = string;

/** path → "dir 755" | "file 644 <base64>" | "link <target>" | "other", `.git` and node_modules left out. */
export function snapshot(
	root: string,
	skip: ReadonlySet<string> = new Set([".git", "node_modules"]),
): Record<string, TreeEntry> {
	const out: Record<string, TreeEntry> = {};
	const walk = (dir: string, rel: string) => {
		for (const name of readdirSync(dir).sort()) {
			if (skip.has(name)) continue;
			const p = join(dir, name);
			const r = rel ? `${rel}/${name}` : name;
			const st = lstatSync(p);
			const mode = (st.mode & 0o7777).toString(8);
			if (st.isDirectory()) {
				out[r] = `dir ${mode}`;
				walk(p, r);
			} else if (st.isSymbolicLink()) out[r] = `link ${readlinkSync(p)}`;
			else if (st.isFile()) out[r] = `file ${mode} ${readFileSync(p).toString("base64")}`;
			else out[r] = "other";
		}
	};
	walk(root, "");
	return out;
}
