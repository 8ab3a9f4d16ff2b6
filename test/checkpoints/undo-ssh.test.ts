/**
 * Undo that covers the shell on an ssh host (a real sshd on 127.0.0.1): the same commands as on
 * this machine, each restored to exactly the earlier tree, with the store kept on the host by
 * keel's checkpoint helper in a private directory of the remote user's state, outside the root.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSshBackend } from "../../src/backend/ssh/index.js";
import { createSession, type Session } from "../../src/index.js";
import { pythonMissing } from "../fixtures/ssh-backend.js";
import { NO_RC_FILES, type Sshd, sshdMissing, sshOptions, startSshd } from "../fixtures/sshd.js";
import { COMMANDS, seed } from "./commands.js";
import { snapshot } from "./tree.js";

const missing = sshdMissing() ?? pythonMissing();
if (missing) console.warn(`skipping the ssh checkpoint tests: ${missing}`);

/** The remote user's state (XDG_STATE_HOME of every ssh session), for this file only. */
const remoteState = mkdtempSync(join(tmpdir(), "keel-undo-ssh-state-"));
let sshd: Sshd | undefined;
let dir: string;
let root: string;
let session: Session;

beforeAll(async () => {
	if (missing) return;
	sshd = await startSshd({ setEnv: { ...NO_RC_FILES.setEnv, XDG_STATE_HOME: remoteState } });
}, 60_000);
afterAll(async () => {
	await sshd?.stop();
	rmSync(remoteState, { recursive: true, force: true });
});

async function open(checkpoints: true | { maxFileBytes: number } = true): Promise<Session> {
	return createSession({
		root,
		backend: createSshBackend(sshOptions(sshd!)),
		profile: "unified",
		stateDir: join(dir, "state"),
		checkpoints,
	});
}

async function ok(name: string, args: unknown) {
	const r = await session.callDynamic(name, args);
	if (!r.ok) throw new Error(`${name} failed: ${JSON.stringify(r.error)}`);
	return r;
}

const stores = () => readdirSync(join(remoteState, "keel", "checkpoints"));

describe.skipIf(missing)(
	"ssh: a restore after a shell command gives back exactly the earlier tree",
	{ timeout: 120_000 },
	() => {
		beforeEach(async () => {
			dir = mkdtempSync(join(tmpdir(), "keel-undo-ssh-"));
			root = join(dir, "ws");
			mkdirSync(root);
			seed(root);
			session = await open();
		}, 60_000);
		afterEach(async () => {
			await session.close();
			rmSync(dir, { recursive: true, force: true });
		});

		it.each(COMMANDS)("%s", async (_label, command) => {
			const before = snapshot(root);
			await ok("bash", { command });
			expect(snapshot(root)).not.toEqual(before);
			const r = await ok("checkpoints", { action: "restore" });
			expect(snapshot(root)).toEqual(before);
			expect((r.details as { problems: unknown[] }).problems).toEqual([]);
		});

		it("the store is on the host, private, outside the root, and gone after close", async () => {
			await ok("bash", { command: "echo more >> src/a.txt" });
			const [store] = stores();
			const at = join(remoteState, "keel", "checkpoints", store);
			expect(statSync(at).mode & 0o777).toBe(0o700);
			expect(readdirSync(join(at, "blobs")).length).toBeGreaterThan(0);
			expect(existsSync(join(root, ".keel"))).toBe(false);
			await session.close();
			expect(existsSync(at)).toBe(false);
			session = await open();
		});

		it("a file the user changed after the call is a conflict, and nothing is restored", async () => {
			await ok("bash", { command: "echo model >> src/a.txt && echo model > src/new.txt" });
			writeFileSync(join(root, "src/a.txt"), "the user's own edit\n");
			const after = snapshot(root);
			const r = await session.call("checkpoints", { action: "restore" });
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.error.code).toBe("RESTORE_CONFLICT");
			expect(snapshot(root)).toEqual(after);
		});

		it("a file past the per-file budget is named as not restorable", async () => {
			await session.close();
			writeFileSync(join(root, "big.bin"), Buffer.alloc(64 * 1024, 7));
			session = await open({ maxFileBytes: 16 * 1024 });
			await ok("bash", { command: "printf x >> big.bin" });
			const list = await ok("checkpoints", { action: "list" });
			expect((list.details as { notRestorable: string[] }).notRestorable).toContain(join(root, "big.bin"));
			const r = await session.call("checkpoints", { action: "restore" });
			expect(r.ok).toBe(false);
		});

		it("a dropped connection: the helper starts again on the same store and undo still works", async () => {
			const before = snapshot(root);
			await ok("bash", { command: "echo one >> src/a.txt" });
			const held = stores();
			expect(await sshd!.dropConnections()).toBeGreaterThan(0);
			await ok("bash", { command: "rm -rf src" });
			expect(stores()).toEqual(held);
			await ok("checkpoints", { action: "restore", id: 0 });
			expect(snapshot(root)).toEqual(before);
		});
	},
);
