/**
 * Extended attributes survive a replace on the container backend, in the CI's
 * podman container (test/fixtures/podman.ts; the host's /tmp is its /tmp): the container's python3
 * copies them in the write script (exec/replace-py.ts). The container's root has no
 * CAP_SYS_ADMIN: an attribute only that could set (security.*) is refused there, and `trusted.*`
 * is invisible to it. Attributes are set and read with python3 on this machine.
 */

import { readdirSync } from "node:fs";
import { chmod, chown, mkdtemp, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createContainerBackend, createShellPool, engineTarget } from "../../src/backend/container/index.js";
import { childShellPipe, execPerCall } from "../../src/backend/container/pipe.js";
import { createExecBackend } from "../../src/backend/exec/index.js";
import type { Backend } from "../../src/backend/types.js";
import { Session } from "../../src/session.js";
import { ok } from "../fixtures/edit-via.js";
import { podmanContainer, podmanMissing } from "../fixtures/podman.js";
import {
	ACL_NAME,
	type Attrs,
	acl,
	attrsOf,
	capability,
	hex,
	type Rival,
	setAttrs,
	withRival,
	xattrSupport,
} from "../fixtures/xattrs.js";

const NOBODY = 65534;
const why = podmanMissing() ?? (xattrSupport(tmpdir()) || undefined);
if (why) console.warn(`container extended attribute tests skipped: ${why}`);

const USER_ATTRS: Attrs = {
	[hex("user.note")]: hex("keep me"),
	[hex("user.odd \n'\"$(touch x)\\")]: "00ff00",
	[Buffer.concat([Buffer.from("user.raw-"), Buffer.from([0xff, 0xfe])]).toString("hex")]: hex("x"),
};

describe.skipIf(why !== undefined)(
	"container backend (podman): extended attributes on replace",
	{ timeout: 60_000 },
	() => {
		let dir: string;
		const sessions: Session[] = [];
		let rival: Rival | undefined;
		beforeEach(async () => {
			dir = await realpath(await mkdtemp(join(tmpdir(), "keel-ct-xattr-")));
			rival = undefined;
		});
		afterEach(async () => {
			await Promise.all(sessions.splice(0).map((s) => s.close()));
			await rm(dir, { recursive: true, force: true });
		});

		async function open(backend: Backend): Promise<Session> {
			const s = await Session.create({ root: dir, backend, stateDir: join(dir, ".state") });
			sessions.push(s);
			return s;
		}
		/** The podman backend itself. */
		const podman = () =>
			open(createContainerBackend(engineTarget({ engine: "podman", container: podmanContainer() })));
		/** The same shells inside the container, with a rival acting right before a write script starts. */
		const podmanWithRival = () => {
			const { prefix, label } = engineTarget({ engine: "podman", container: podmanContainer() });
			const pool = createShellPool({
				open: () => childShellPipe(prefix, label),
				direct: execPerCall(prefix, label),
				label,
			});
			return open(
				createExecBackend({
					transport: withRival(pool.transport, () => rival),
					kind: "podman",
					close: () => pool.close(),
				}),
			);
		};
		async function put(name: string, attrs: Attrs, mode = 0o640): Promise<string> {
			const p = join(dir, name);
			await writeFile(p, "value = 41\n");
			await chmod(p, mode);
			setAttrs(p, attrs);
			return p;
		}
		const edit42 = (s: Session, name: string) =>
			s.call("edit", { path: name, edits: [{ oldText: "value = 41", newText: "value = 42" }] });
		const temps = () => readdirSync(dir).filter((n) => n.startsWith(".keel-tmp"));

		it("user attributes (odd names), a POSIX ACL, the mode and the owner are kept; a capability is dropped", async () => {
			const p = await put("f.txt", { ...USER_ATTRS, [ACL_NAME]: acl(NOBODY) }, 0o660);
			await chown(p, NOBODY, NOBODY);
			const cap = await put("tool.bin", { ...USER_ATTRS, [hex("security.capability")]: capability() }, 0o755);
			const before = await stat(p);
			const s = await podman();
			ok(await edit42(s, "f.txt"));
			const after = await stat(p);
			expect(after.ino).not.toBe(before.ino);
			expect(await readFile(p, "utf8")).toBe("value = 42\n");
			expect(attrsOf(p)).toEqual({ ...USER_ATTRS, [ACL_NAME]: acl(NOBODY) });
			expect([after.uid, after.gid, after.mode]).toEqual([NOBODY, NOBODY, before.mode]);
			ok(await edit42(s, "tool.bin"));
			expect(attrsOf(cap)).toEqual(USER_ATTRS);
		});

		it("an attribute the container's root cannot set (security.*) makes the edit refuse; the file is left alone", async () => {
			const p = await put("labelled.txt", { [hex("security.keel-test")]: hex("label") });
			const before = await stat(p);
			const r = await edit42(await podman(), "labelled.txt");
			expect(r.ok).toBe(false);
			if (!r.ok) {
				expect(r.error.code).toBe("PERMISSION_DENIED");
				expect(r.error.message).toContain("security.keel-test");
			}
			expect((await stat(p)).ino).toBe(before.ino);
			expect(await readFile(p, "utf8")).toBe("value = 41\n");
			expect(attrsOf(p)).toEqual({ [hex("security.keel-test")]: hex("label") });
			expect(temps()).toEqual([]);
		});

		it("trusted.* is invisible to the container's root, so it is not kept (docs/SAFETY.md)", async () => {
			const p = await put("t.txt", { ...USER_ATTRS, [hex("trusted.mark")]: hex("host root only") });
			ok(await edit42(await podman(), "t.txt"));
			expect(attrsOf(p)).toEqual(USER_ATTRS);
		});

		it("an attribute added between the plan and the commit fails the swap; nothing is lost", async () => {
			const p = await put("late.txt", USER_ATTRS);
			const s = await podmanWithRival();
			ok(await s.call("read", { path: "late.txt" }));
			const late = { [hex("user.late")]: hex("a rival's") };
			rival = { target: p, strike: (t) => setAttrs(t, late) };
			const r = await s.call("write", { path: "late.txt", content: "mine\n" });
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.error.code).toBe("CHANGED_ON_DISK");
			expect(rival.struck).toBe(true);
			expect(await readFile(p, "utf8")).toBe("value = 41\n");
			expect(attrsOf(p)).toEqual({ ...USER_ATTRS, ...late });
			expect(temps()).toEqual([]);
		});
	},
);
