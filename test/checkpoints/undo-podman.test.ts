/**
 * Undo that covers the shell in a podman container: the same commands as on this machine and on
 * ssh, each restored to exactly the earlier tree, with the store kept inside the container by
 * keel's checkpoint helper (started through the container's exec client). The test container
 * shares this machine's /tmp, so the tree is compared from here.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createContainerBackend, engineTarget } from "../../src/backend/container/index.js";
import { createSession, type Session } from "../../src/index.js";
import { podmanContainer, podmanMissing } from "../fixtures/podman.js";
import { itUndoesEachCommand, ok, seededWorkspace } from "./commands.js";
import { snapshot } from "./tree.js";

const why = podmanMissing();
if (why) console.warn(`skipping the podman checkpoint tests: ${why}`);

let dir: string;
let root: string;
let session: Session;

describe.skipIf(why !== undefined)(
	"podman: a restore after a shell command gives back exactly the earlier tree",
	{ timeout: 120_000 },
	() => {
		beforeEach(async () => {
			({ dir, root } = seededWorkspace("keel-undo-podman-"));
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

		itUndoesEachCommand(() => ({ session, root }));

		it("a file changed from outside the container after the call is a conflict, and nothing is restored", async () => {
			await ok(session, "bash", { command: "echo model >> src/a.txt" });
			writeFileSync(join(root, "src/a.txt"), "the user's own edit\n");
			const after = snapshot(root);
			const r = await session.call("checkpoints", { action: "restore" });
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.error.code).toBe("RESTORE_CONFLICT");
			expect(snapshot(root)).toEqual(after);
		});
	},
);
