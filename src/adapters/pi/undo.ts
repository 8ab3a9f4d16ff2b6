/**
 * The pi extension's `/undo` command over the session's checkpoints: no argument undoes the last
 * call that changed files, a number restores that checkpoint, `list` lists them. What it says is
 * one notice for the user; a conflict changes nothing and names the files.
 */
import { KeelError } from "../../boundary/errors.js";
import type { Session } from "../../session.js";

export async function undoCommand(
	session: Session,
	args: string,
): Promise<[string, "info" | "warning" | "error"]> {
	const cps = session.checkpoints;
	if (!cps)
		return [
			"keel keeps no checkpoints in this session: start pi with --keel-checkpoints (or KEEL_CHECKPOINTS=1).",
			"warning",
		];
	const arg = args.trim();
	try {
		if (arg === "list") {
			const l = await cps.list();
			const lines = l.checkpoints.map(
				(c) => `${c.id} ${c.tool}${c.fileCount ? `: ${c.files.join(", ")}` : ""}`,
			);
			return [lines.join("\n") || "No checkpoints yet.", "info"];
		}
		if (arg !== "" && !/^\d+$/.test(arg))
			return ["usage: /undo (the last change), /undo N (checkpoint N), /undo list", "warning"];
		const r = await cps.restore(arg === "" ? undefined : Number(arg));
		const kept = r.problems.map((p) => `left as is: ${p.path}: ${p.problem}`);
		return [
			[`keel restored ${r.restored.length} path(s) to checkpoint ${r.to}.`, ...kept].join("\n"),
			kept.length ? "warning" : "info",
		];
	} catch (e) {
		return [e instanceof KeelError ? e.message : String(e), "error"];
	}
}
