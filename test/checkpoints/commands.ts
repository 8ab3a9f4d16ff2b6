/** The workspace and the shell commands every backend's checkpoint test undoes, and that test. */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Session } from "../../src/index.js";
import { snapshot } from "./tree.js";

/** Files, an executable, a link, an empty directory and a binary file. */
export function seed(root: string): void {
	mkdirSync(join(root, "src/deep"), { recursive: true });
	mkdirSync(join(root, "empty"));
	writeFileSync(join(root, "src/a.txt"), "alpha\nbeta\n");
	writeFileSync(join(root, "src/deep/b.py"), "print('b')\n");
	writeFileSync(join(root, "run.sh"), "#!/bin/sh\necho hi\n");
	chmodSync(join(root, "run.sh"), 0o755);
	symlinkSync("src/a.txt", join(root, "link-to-a"));
	writeFileSync(join(root, "bin.dat"), Buffer.from([0, 1, 2, 255, 0]));
}

/** Each row: a command that changes the tree in one way a model's shell does. */
export const COMMANDS: Array<[string, string]> = [
	["sed -i rewrites a file", "sed -i 's/alpha/ALPHA/' src/a.txt"],
	["rm -rf removes a directory tree", "rm -rf src"],
	["mv renames a file", "mv src/a.txt src/renamed.txt"],
	["mv renames a directory", "mv src moved"],
	["chmod changes a mode", "chmod 600 src/a.txt && chmod 700 src/deep"],
	["ln -s adds and retargets links", "ln -s nowhere dangling && ln -sfn run.sh link-to-a"],
	["an empty directory appears and one goes", "mkdir -p new/empty/inner && rmdir empty"],
	["a file becomes binary", "printf '\\000\\001' > src/a.txt"],
	[
		"python writes files",
		"python3 -c \"open('py.txt','w').write('x'*1000); import os; os.remove('bin.dat')\"",
	],
	[
		"a file becomes a link, and a link a file",
		"rm src/a.txt && ln -s ../run.sh src/a.txt && rm link-to-a && echo x > link-to-a",
	],
	[
		"many kinds at once",
		"rm run.sh && mkdir run.sh.d && echo x > run.sh.d/f && chmod 644 bin.dat && mv link-to-a l2",
	],
];

/** A new directory (its real path: a container sees the same /tmp) with a seeded `ws` in it. */
export function seededWorkspace(prefix: string): { dir: string; root: string } {
	const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
	const root = join(dir, "ws");
	mkdirSync(root);
	seed(root);
	return { dir, root };
}

/** A call that must succeed; its result. */
export async function ok(session: Session, name: string, args: unknown) {
	const r = await session.callDynamic(name, args);
	if (!r.ok) throw new Error(`${name} failed: ${JSON.stringify(r.error)}`);
	return r;
}

/** One test per row of COMMANDS: the command changes the tree, the restore gives back exactly the earlier one. */
export function itUndoesEachCommand(current: () => { session: Session; root: string }): void {
	it.each(COMMANDS)("%s, undone", async (_label, command) => {
		const { session, root } = current();
		const before = snapshot(root);
		await ok(session, "bash", { command });
		expect(snapshot(root)).not.toEqual(before);
		const r = await ok(session, "checkpoints", { action: "restore" });
		expect(snapshot(root)).toEqual(before);
		expect((r.details as { problems: unknown[] }).problems).toEqual([]);
	});
}
