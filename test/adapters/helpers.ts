/**
 * One scripted agent turn for every framework test: the model reads a file, tries an edit that
 * cannot match, edits for real, runs bash, and reads an image. Each framework test drives its own
 * real loop with these calls and checks what the loop handed back to the model.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSession, type Session } from "../../src/index.js";
import { PNG_1x1 } from "../bad-input/fixtures.js";

export { PNG_1x1 };

export interface ScriptedCall {
	id: string;
	name: string;
	args: Record<string, unknown>;
}

/** The calls, one per model step, in order. */
export const SCRIPT: ScriptedCall[] = [
	{ id: "c1", name: "read", args: { path: "notes.txt" } },
	{ id: "c2", name: "edit", args: { path: "notes.txt", edits: [{ oldText: "gamma", newText: "GAMMA" }] } },
	{ id: "c3", name: "edit", args: { path: "notes.txt", edits: [{ oldText: "alpha", newText: "ALPHA" }] } },
	{ id: "c4", name: "bash", args: { command: "cat notes.txt; echo exit-marker-$((6*7))" } },
	{ id: "c5", name: "read", args: { path: "pixel.png" } },
];

export const FINAL_TEXT = "All done.";

export interface Workspace {
	dir: string;
	session: Session;
	notes(): Promise<string>;
	close(): Promise<void>;
}

export async function workspace(profile: "pi" | "unified" = "pi"): Promise<Workspace> {
	const dir = await mkdtemp(join(tmpdir(), "keel-fw-"));
	await writeFile(join(dir, "notes.txt"), "alpha\nbeta\n");
	await writeFile(join(dir, "pixel.png"), PNG_1x1);
	const session = await createSession({ root: dir, profile });
	return {
		dir,
		session,
		notes: () => readFile(join(dir, "notes.txt"), "utf8"),
		close: async () => {
			await session.close();
			await rm(dir, { recursive: true, force: true });
		},
	};
}

/** What each scripted call's result must show the model (text checks; images are checked per framework). */
export const EXPECTED_TEXT: Record<string, RegExp> = {
	c1: /alpha\nbeta/,
	c2: /^\[NO_MATCH\] /,
	c3: /Successfully replaced/,
	c4: /ALPHA\nbeta\n[\s\S]*exit-marker-42/,
};

/** A bash command that marks its start with a file and then sleeps; the marker finds it in ps. */
export function sleeper(dir: string, marker: string): { command: string; started: string } {
	const started = join(dir, `${marker}.started`);
	return { command: `touch ${marker}.started; sleep 30 # ${marker}`, started };
}

/**
 * A command that prints a first line, then waits (at most about 10 s) for a file named `gate` in
 * the workspace and says whether it came. A test opens the gate when it sees the first line
 * streamed, so "gate-opened" in the final output proves the output reached the host while the
 * command ran.
 */
export function gatedCommand(gate: string): string {
	return `echo first-chunk; for i in $(seq 200); do [ -f ${gate} ] && break; sleep 0.05; done; if [ -f ${gate} ]; then echo gate-opened; else echo gate-timeout; fi`;
}
