/**
 * Undo that covers the shell inside a bubblewrap sandbox: the commands run in the sandbox, the
 * scans and the store stay outside it (the store is under keel's state, hidden from commands).
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import { createSession, type Session } from "../../src/index.js";
import { bwrapAvailable } from "../contract/backends.js";
import { itUndoesEachCommand, seededWorkspace } from "./commands.js";

const available = await bwrapAvailable();
let dir: string;
let root: string;
let session: Session;

describe.skipIf(available !== true)(
	`checkpoints on bwrap${available === true ? "" : ` (skipped: ${available})`}`,
	() => {
		beforeEach(async () => {
			({ dir, root } = seededWorkspace("keel-undo-bwrap-"));
			session = await createSession({
				root,
				profile: "unified",
				backend: createBwrapBackend({ roots: [root] }),
				stateDir: join(dir, "state"),
				checkpoints: true,
			});
		});
		afterEach(async () => {
			await session.close();
			rmSync(dir, { recursive: true, force: true });
		});

		itUndoesEachCommand(() => ({ session, root }));

		it("a command in the sandbox cannot see the store", async () => {
			await session.call("bash", { command: "echo x > src/a.txt" });
			const store = join(dir, "state", "checkpoints");
			expect(readdirSync(store).length).toBeGreaterThan(0);
			const r = await session.call("bash", {
				command: `ls -A ${store} 2>&1 | wc -l; cat ${store}/*/* 2>&1 | head -c 200`,
			});
			expect(r.ok).toBe(true);
			const out = (r.ok && (r.content[0] as { text: string }).text) || "";
			expect(out).not.toContain("alpha");
		});
	},
);
