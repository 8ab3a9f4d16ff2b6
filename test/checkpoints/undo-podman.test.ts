/**
 * Undo that covers the shell in a podman container: the same commands as on this machine and on
 * ssh, each restored to exactly the earlier tree, with the store kept inside the container by
 * keel's checkpoint helper (started through the container's exec client). The test container
 * shares this machine's /tmp, so the tree is compared from here.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createContainerBackend, engineTarget } from "../../src/backend/container/index.js";
import { createSession, type Session } from "../../src/index.js";
import { podmanContainer, podmanMissing } from "../fixtures/podman.js";
import { COMMANDS, seed } from "./commands.js";
import { snapshot } from "./tree.js";

const why = podmanMissing();
if (why) console.warn(`skipping the podman checkpoint tests: ${why}`);

let dir: string;
let root: string;
let session: Session;

async function ok(name: string, args: unknown) {
	const r = await session.callDynamic(name, args);
	if (!r.ok) throw new Error(`${name} failed: ${JSON.stringify(r.error)}`);
	return r;
}

describe.skipIf(why !== undefined)(
	"podman: a restore after a shell command gives back exactly the earlier tree",
	{ timeout: 120_000 },
	() => {
		beforeEach(async () => {
			dir = realpathSync(mkdtempSync(join(tmpdir(), "keel-undo-podman-")));
			root = join(dir, "ws");
			mkdirSync(root);
			seed(root);
			session = await createSession({
				root,
				backend: createContainerBackend(engineTarget({ engine: "podman", container: podmanContainer() })),
				profile: "unified",
				stateDir: join(dir, "state"),
				checkpoints: true,
			});
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

		it("a file changed from outside the container after the call is a conflict, and nothing is restored", async () => {
			await ok("bash", { command: "echo model >> src/a.txt" });
			writeFileSync(join(root, "src/a.txt"), "the user's own edit\n");
			const after = snapshot(root);
			const r = await session.call("checkpoints", { action: "restore" });
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.error.code).toBe("RESTORE_CONFLICT");
			expect(snapshot(root)).toEqual(after);
		});
	},
);
