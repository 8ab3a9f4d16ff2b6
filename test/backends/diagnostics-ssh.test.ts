/**
 * The workspace's checkers on the ssh backend run on the remote host, through the ssh connection,
 * in the remote workspace (a real sshd on 127.0.0.1: test/fixtures/sshd.ts). The checker reports
 * only when it sees the environment this sshd gives its sessions, so a run on this machine instead
 * reports nothing.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiagnosticsReport } from "../../src/diagnostics/diagnostics.js";
import { Session } from "../../src/session.js";
import { useSshBackend } from "../fixtures/ssh-backend.js";
import { sshdMissing } from "../fixtures/sshd.js";

const missing = sshdMissing();
if (missing) console.warn(`skipping the checkers on ssh: ${missing}`);

let dir: string;
beforeAll(async () => {
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-diagnostics-"));
});
afterAll(async () => {
	if (dir) await rm(dir, { recursive: true, force: true });
});
// Set by this sshd in every session it serves: only a command run through it sees it.
const live = useSshBackend(missing, async () => ({ setEnv: { KEEL_TEST_VIA_SSHD: "yes" } }));

describe.skipIf(missing)("checkers on the ssh backend", () => {
	it("run on the remote host, in the remote workspace, and report the new error", async () => {
		await writeFile(join(dir, "a.txt"), "fine\n");
		const session = await Session.create({
			root: dir,
			backend: live.backend,
			diagnostics: [
				{
					name: "remote-only",
					// Only in the sshd's sessions, and in the remote workspace.
					command: `[ "$KEEL_TEST_VIA_SSHD" = yes ] && [ "$(pwd -P)" = '${dir}' ] && awk '/BAD/ { print FILENAME ":" FNR ":1: error: a bad word" }' {files}`,
					extensions: ["txt"],
					timeoutMs: 20_000,
				},
			],
		});
		try {
			const r = await session.call("edit", { path: "a.txt", edits: [{ oldText: "fine", newText: "BAD" }] });
			expect(r.ok, JSON.stringify(r)).toBe(true);
			expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("BAD\n");
			const report = r.ok ? (r.details as { diagnostics?: DiagnosticsReport }).diagnostics : undefined;
			expect(report?.checkers[0]).toMatchObject({
				checker: "remote-only",
				status: "ok",
				files: [{ path: "a.txt", errors: [{ line: 1, column: 1, message: "a bad word" }] }],
			});
		} finally {
			await session.close();
		}
	}, 60_000);
});
