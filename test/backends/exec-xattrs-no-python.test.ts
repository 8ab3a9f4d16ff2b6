/**
 * The exec backend on a target without python3 (docs/SAFETY.md): this machine
 * with python3 hidden in a mount namespace of each call. The sh tail of the write script keeps the
 * owner and mode and refuses what the caller could not write in place or whose owner it cannot
 * keep; extended attributes are dropped there, because nothing on such a target lists them.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readFile, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { createExecBackend } from "../../src/backend/exec/index.js";
import type { ExecTransport } from "../../src/backend/exec/transport.js";
import { Session } from "../../src/session.js";
import { ok } from "../fixtures/edit-via.js";
import { SETPRIV } from "../fixtures/keel-cli.js";
import {
	type Attrs,
	attrsOf,
	hex,
	PY,
	putWithAttrs,
	spawnTransport,
	tempsIn,
	xattrSupport,
} from "../fixtures/xattrs.js";

const AS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;
const support = xattrSupport(tmpdir());
const USER_ATTRS: Attrs = {
	[hex("user.note")]: hex("keep me"),
	[Buffer.concat([Buffer.from("user.raw-"), Buffer.from([0xff, 0xfe])]).toString("hex")]: "00ff00",
};

let work: string;
let root: string;
const sessions: Session[] = [];
beforeEach(async () => {
	work = await realpath(await mkdtemp(join(tmpdir(), "keel-exec-nopy-")));
	root = join(work, "root");
	await mkdir(root);
	await chmod(work, 0o755);
});
afterEach(async () => {
	await Promise.all(sessions.splice(0).map((s) => s.close()));
	await rm(work, { recursive: true, force: true });
});
async function open(_profile: "pi", transport: ExecTransport): Promise<Session> {
	const s = await Session.create({
		root,
		backend: createExecBackend({ transport }),
		stateDir: join(work, "state"),
	});
	sessions.push(s);
	return s;
}
const put = async (name: string, attrs: Attrs, mode = 0o640) => putWithAttrs(root, name, attrs, mode);
const temps = () => tempsIn(root);
const edit42 = (s: Session, name: string) =>
	s.call("edit", { path: name, edits: [{ oldText: "value = 41", newText: "value = 42" }] });

/**
 * This machine as a target without python3: PATH without it, and /usr/bin/python3 hidden by a bind
 * mount of a program that fails, in a mount namespace of each call; `user` runs the call as that
 * uid (after the mount). `missing` says why it cannot be had here.
 */
const noPython = (() => {
	const fakeDir = mkdtempSync(join(tmpdir(), "keel-no-python3-"));
	const fake = join(fakeDir, "python3");
	writeFileSync(fake, "#!/bin/sh\nexit 127\n", { mode: 0o755 });
	const env = { ...process.env, PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };
	const prefix = (user?: number) => {
		const bin = execFileSync("readlink", ["-f", PY], { encoding: "utf8" }).trim();
		const p = ["unshare", "-m", "--", "sh", "-c", 'mount --bind "$0" "$1" && shift && exec "$@"', fake, bin];
		if (user !== undefined)
			p.push(SETPRIV as string, "--reuid", String(user), "--regid", String(user), "--clear-groups", "--");
		return p;
	};
	let missing: string | undefined;
	if (!AS_ROOT || !SETPRIV || !existsSync(PY)) missing = "needs root, setpriv and /usr/bin/python3";
	else {
		try {
			const p = prefix();
			execFileSync(p[0], [...p.slice(1), "sh", "-c", `! ${PY} -c pass && ! command -v getfattr`], {
				env,
				stdio: "ignore",
			});
		} catch {
			missing = "cannot hide python3 in a mount namespace here (unshare -m)";
		}
	}
	return {
		missing,
		transport: (user?: number) => spawnTransport(prefix(user), env),
		cleanup: () => rmSync(fakeDir, { recursive: true, force: true }),
	};
})();
afterAll(() => noPython.cleanup());

if (noPython.missing)
	console.warn(`skipping the exec tests on a target without python3: ${noPython.missing}`);
describe.skipIf(support !== "" || noPython.missing !== undefined)(
	`exec backend on a target without python3${noPython.missing ? ` (skipped: ${noPython.missing})` : ""}`,
	() => {
		it("keeps the owner and mode, but not the attributes: nothing there can list them (docs/SAFETY.md)", async () => {
			const p = await put("f.txt", USER_ATTRS, 0o4755);
			await chown(p, NOBODY, NOBODY);
			await chmod(p, 0o4755);
			ok(await edit42(await open("pi", noPython.transport()), "f.txt"));
			const st = await stat(p);
			expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([NOBODY, NOBODY, 0o4755]);
			expect(await readFile(p, "utf8")).toBe("value = 42\n");
			expect(attrsOf(p)).toEqual({});
		});

		it.each([
			["its own 0444 file", 0o444, NOBODY, "not writable"],
			["root's 0666 file", 0o666, 0, "owned by uid 0"],
		])("a non-root caller's replace of %s is refused and left alone", async (_what, mode, owner, says) => {
			await chown(root, NOBODY, NOBODY);
			const p = await put("f.txt", {}, mode);
			await chown(p, owner, owner);
			const before = await stat(p);
			const r = await edit42(await open("pi", noPython.transport(NOBODY)), "f.txt");
			expect(r.ok).toBe(false);
			if (!r.ok) {
				expect(r.error.code).toBe("PERMISSION_DENIED");
				expect(r.error.message).toContain(says);
			}
			const after = await stat(p);
			expect([after.ino, after.uid, after.mode]).toEqual([before.ino, before.uid, before.mode]);
			expect(await readFile(p, "utf8")).toBe("value = 41\n");
			expect(temps()).toEqual([]);
		});
	},
);
