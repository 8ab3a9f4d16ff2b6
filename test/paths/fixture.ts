/**
 * Fixture for the path battery: a fresh temp tree per test with a workspace root, look-alike
 * siblings holding secrets, and every kind of link an escape attempt needs.
 *
 *   <tmp>/root            the workspace root
 *   <tmp>/root2, root_backup, root-old, root.bak   prefix siblings (secrets)
 *   <tmp>/outside         secrets, the target of most links
 *   <tmp>/ro, <tmp>/extra roots some describes configure; ro2/extra2 are their prefix siblings
 */
import { createHash } from "node:crypto";
import {
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	readlinkSync,
	realpathSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Marker in every file outside the roots; it must never show up in a tool's output. */
export const SECRET = "TOPSECRET";
/** Marker in the files inside the root the look-alike tests read and edit. */
export const LOOKALIKE = "LOOKALIKE";

const secret = (where: string) => `${SECRET} ${where}\n`;
const lookalike = (where: string) => `${LOOKALIKE} ${where}\n`;

/** Regular files, relative to <tmp>. */
const FILES: Record<string, string> = {
	"root/f.txt": lookalike("root/f.txt"),
	"root/real.txt": lookalike("root/real.txt"),
	"root/victim.txt": "victim\n",
	"root/..x": lookalike("root/..x"),
	"root/x..": lookalike("root/x.."),
	"root/.../f.txt": lookalike("root/.../f.txt"),
	"root/.hidden": lookalike("root/.hidden"),
	"root/a..b/c": lookalike("root/a..b/c"),
	"root/..\\x": lookalike("root/..\\x"),
	"root/dir with spaces/file name.txt": lookalike("root/dir with spaces/file name.txt"),
	"root/ünïcødé/日本語 ✓.txt": lookalike("root/ünïcødé/日本語 ✓.txt"),
	"root/nb space.txt": lookalike("root/nb space.txt"),
	"root/sub/f.txt": lookalike("root/sub/f.txt"),
	"root/sub/.zshrc": "# zshrc\n",
	"root/sub/deeper/g.txt": lookalike("root/sub/deeper/g.txt"),
	"root/a/b/c/d/e/f/g/h/leaf.txt": lookalike("root/a/b/c/d/e/f/g/h/leaf.txt"),
	"root/home/x.txt": lookalike("root/home/x.txt"),
	"root/.git/config": "[core]\n\tbare = false\n",
	"root/.git/hooks/pre-commit": "#!/bin/sh\nexit 0\n",
	"root/.bashrc": "# bashrc\n",
	"root/.config/fish/config.fish": "# fish\n",
	"root/sub/.git/config": "[core]\n\tbare = false\n",
	"root/.github/config": lookalike("root/.github/config"),
	"root/.git-backup/config": lookalike("root/.git-backup/config"),
	"root/.bashrc.bak": lookalike("root/.bashrc.bak"),
	"root/bashrc": lookalike("root/bashrc"),
	"root2/secret.txt": secret("root2/secret.txt"),
	"root_backup/secret.txt": secret("root_backup/secret.txt"),
	"root-old/secret.txt": secret("root-old/secret.txt"),
	"root.bak/secret.txt": secret("root.bak/secret.txt"),
	"outside/secret.txt": secret("outside/secret.txt"),
	"outside/victim.txt": secret("outside/victim.txt"),
	"outside/deep/secret.txt": secret("outside/deep/secret.txt"),
	"outside/deep/dir/d.txt": secret("outside/deep/dir/d.txt"),
	"outside/pd/victim.txt": secret("outside/pd/victim.txt"),
	"outside/outside-only.txt": secret("outside/outside-only.txt"),
	"ro/r.txt": lookalike("ro/r.txt"),
	"ro2/secret.txt": secret("ro2/secret.txt"),
	"extra/e.txt": lookalike("extra/e.txt"),
	"extra2/secret.txt": secret("extra2/secret.txt"),
};

/** Symbolic links, relative to <tmp>; "$TMP" in a target is replaced by the temp dir. */
const LINKS: [string, string][] = [
	["root/lnk_file", "$TMP/outside/secret.txt"],
	["root/lnk_rel", "../outside/secret.txt"],
	["root/link1", "link2"],
	["root/link2", "$TMP/outside/secret.txt"],
	["root/linkdir", "$TMP/outside"],
	["root/dangle", "$TMP/outside/ghost.txt"],
	["root/dangle_rel", "../outside/ghost_rel.txt"],
	["root/dchain1", "dchain2"],
	["root/dchain2", "$TMP/outside/ghost2.txt"],
	["root/dangledir", "$TMP/outside/ghostdir"],
	["root/loopa", "loopb"],
	["root/loopb", "loopa"],
	["root/self", "self"],
	["root/ld", "$TMP/outside/deep/dir"],
	["root/up", "ld/../secret.txt"],
	["root/up_new", "ld/../new-up.txt"],
	["root/parentlink", ".."],
	["root/rootlink", "/"],
	["root/sub/esc", "../../outside"],
	["root/sib", "../root2"],
	["root/sibabs", "$TMP/root_backup"],
	["root/inlink", "real.txt"],
	["root/indir", "sub"],
	["root/cfglink", ".git/config"],
	["root/rolink", "$TMP/ro/r.txt"],
	["root/rodirlink", "../ro"],
	["root/elink", "$TMP/extra/e.txt"],
];

export interface Fixture {
	/** The temp dir (canonical). */
	tmp: string;
	/** <tmp>/root (canonical). */
	root: string;
	/** <tmp>/outside. */
	outside: string;
	/** Absolute path of `rel` under <tmp>. */
	at(rel: string): string;
}

// The tree is made, walked and removed with synchronous calls: a test makes it, snapshots it
// twice and removes it (about 300 file operations), and the promise API's hop through the thread
// pool for each costs more than the operation; nothing else runs in the test meanwhile.
export async function createFixture(): Promise<Fixture> {
	const tmp = realpathSync(mkdtempSync(join(tmpdir(), "keel-paths-")));
	// Leaf directories first (recursive mkdir makes their parents), then files and links.
	const dirs = new Set(Object.keys(FILES).map((rel) => dirname(join(tmp, rel))));
	const leaves = [...dirs].filter((d) => ![...dirs].some((o) => o.startsWith(`${d}/`)));
	for (const d of leaves) mkdirSync(d, { recursive: true });
	for (const [rel, content] of Object.entries(FILES)) writeFileSync(join(tmp, rel), content);
	for (const [rel, target] of LINKS) symlinkSync(target.replace("$TMP", tmp), join(tmp, rel));
	return { tmp, root: join(tmp, "root"), outside: join(tmp, "outside"), at: (rel) => join(tmp, rel) };
}

export async function removeFixture(fx: Fixture | undefined): Promise<void> {
	if (fx) rmSync(fx.tmp, { recursive: true, force: true });
}

export function sha256(data: Uint8Array): string {
	return createHash("sha256").update(data).digest("hex");
}

/**
 * Every entry below `dir`, without following links: type, link target, and for files the inode,
 * mode and content hash (so a file replaced by an identical copy still counts as a change).
 */
export async function snapshot(dir: string): Promise<Record<string, string>> {
	const out: Record<string, string> = {};
	const walk = (abs: string, rel: string): void => {
		for (const name of readdirSync(abs)) {
			const a = join(abs, name);
			const r = rel ? `${rel}/${name}` : name;
			const st = lstatSync(a, { bigint: true });
			const mode = (Number(st.mode) & 0o7777).toString(8);
			if (st.isSymbolicLink()) {
				out[r] = `link -> ${readlinkSync(a)}`;
			} else if (st.isDirectory()) {
				out[r] = `dir mode=${mode}`;
				walk(a, r);
			} else if (st.isFile()) {
				out[r] = `file ino=${st.ino} mode=${mode} sha=${sha256(readFileSync(a))}`;
			} else {
				out[r] = "other";
			}
		}
	};
	walk(dir, "");
	return out;
}

/** `snapshot` without the entries under the given prefixes (relative to the snapshotted dir). */
export function without(snap: Record<string, string>, ...prefixes: string[]): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [k, v] of Object.entries(snap)) {
		if (prefixes.some((p) => k === p || k.startsWith(`${p}/`))) continue;
		out[k] = v;
	}
	return out;
}
