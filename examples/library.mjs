// keel as a library on a directory: `node examples/library.mjs [DIR]`.
//
// With DIR, it lists DIR and greps it for TODO (read-only). Without, it makes a scratch directory
// and shows the calls an agent makes: write, read, an edit, a failing edit (a structured error,
// nothing changed on disk), grep and bash; then removes the directory.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSession } from "keel";

/** One tool call, printed as the CLI prints it: {ok, content} or {ok: false, error}. */
async function call(session, tool, args) {
	const r = await session.call(tool, args);
	const shown = r.ok
		? r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n")
		: r.error;
	console.log(`> ${tool} ${JSON.stringify(args)}`);
	console.log(r.ok ? shown : `error ${JSON.stringify(shown)}`);
	console.log();
	return r;
}

const dir = process.argv[2];
if (dir) {
	const session = await createSession({ root: dir });
	try {
		await call(session, "ls", { path: "." });
		await call(session, "grep", { pattern: "TODO", limit: 10 });
	} finally {
		await session.close();
	}
} else {
	const scratch = await mkdtemp(join(tmpdir(), "keel-example-"));
	const session = await createSession({ root: scratch });
	try {
		await call(session, "write", { path: "src/greet.ts", content: 'export const greet = () => "hello";\n' });
		await call(session, "read", { path: "src/greet.ts" });
		await call(session, "edit", {
			path: "src/greet.ts",
			edits: [{ oldText: '"hello"', newText: '"hello, keel"' }],
		});
		const failed = await call(session, "edit", {
			path: "src/greet.ts",
			edits: [{ oldText: "no such text", newText: "x" }],
		});
		if (failed.ok) throw new Error("an edit of absent text should fail");
		await call(session, "grep", { pattern: "keel" });
		await call(session, "bash", { command: "cat src/greet.ts" });
		// A path outside the root is refused before anything is touched.
		const outside = await call(session, "read", { path: "/etc/passwd" });
		if (outside.ok) throw new Error("a read outside the root should fail");
	} finally {
		await session.close();
		await rm(scratch, { recursive: true, force: true });
	}
}
