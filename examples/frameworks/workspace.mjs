// The scratch project every framework example works on, and the calls its scripted model makes.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSession } from "keel";

/** The calls the scripted model makes, in order: read the file, then edit it. */
export const CALLS = [
	{ id: "call-1", name: "read", args: { path: "notes.txt" } },
	{
		id: "call-2",
		name: "edit",
		args: { path: "notes.txt", edits: [{ oldText: "draft", newText: "final" }] },
	},
];
export const FINAL_TEXT = "notes.txt now says final.";

/** A scratch directory holding notes.txt and a keel session rooted there; close() removes both. */
export async function scratchProject() {
	const dir = await mkdtemp(join(tmpdir(), "keel-fw-example-"));
	await writeFile(join(dir, "notes.txt"), "status: draft\n");
	const session = await createSession({ root: dir });
	return {
		dir,
		session,
		notes: () => readFile(join(dir, "notes.txt"), "utf8"),
		async close() {
			await session.close();
			await rm(dir, { recursive: true, force: true });
		},
	};
}

/** Fails the example (exit status 1) unless the edit landed. */
export async function checkEdited(project) {
	const text = await project.notes();
	console.log(`notes.txt after the run: ${JSON.stringify(text)}`);
	if (text !== "status: final\n") throw new Error("the scripted edit did not land");
}
