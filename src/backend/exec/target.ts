/**
 * What the exec backend knows about its target: the tools are probed once per backend object (one
 * transport call) and cached; a failed probe is retried on the next call (the target may have been
 * unreachable for a moment).
 */
import { backendFact } from "../../boundary/backend-facts.js";
import { formatStatLine, parseStatLine } from "../stat-line.js";
import type { FileStat } from "../types.js";
import { probeScript, statFormat } from "./scripts.js";
import { type ExecTransport, runScript } from "./transport.js";

export interface TargetInfo {
	/** stat(1) has nanosecond timestamps. */
	precise: boolean;
	/** The stat(1) format of a FileStat on this target. */
	fmt: string;
	/** bash when the target has it, else sh. */
	shell: "bash" | "sh";
	/**
	 * The target's python3 that can copy extended attributes (replace-py.ts), or "" when it has
	 * none: a replace there does not keep them (docs/SAFETY.md).
	 */
	python: string;
}

export interface Target {
	readonly transport: ExecTransport;
	info(): Promise<TargetInfo>;
}

export function createTarget(transport: ExecTransport, shell?: "bash" | "sh"): Target {
	let probed: Promise<TargetInfo> | undefined;
	const probe = async (): Promise<TargetInfo> => {
		const r = await runScript(transport, probeScript(), []);
		const text = r.stdout.toString("utf8");
		const lineEnd = text.indexOf("\n");
		const out = (lineEnd < 0 ? text : text.slice(0, lineEnd)).split(" ");
		const python = lineEnd < 0 ? "" : text.slice(lineEnd + 1);
		if (r.exitCode !== 0 || out[0] !== "ok") {
			throw backendFact("target-lacks-coreutils", { reason: r.stderr.trim() });
		}
		const precise = out[1] === "precise";
		return { precise, fmt: statFormat(precise), shell: shell ?? (out[2] === "bash" ? "bash" : "sh"), python };
	};
	return {
		transport,
		info() {
			probed ??= probe().catch((e) => {
				probed = undefined;
				throw e;
			});
			return probed;
		},
	};
}

/** A FileStat from one line of `stat -c FMT` output. */
export function parseStat(line: string): FileStat {
	const st = parseStatLine(line);
	if (!st) throw backendFact("unexpected-stat", { reason: line });
	return st;
}

/**
 * The stat line the scripts compare an entry with (stat-line.ts); "?" for a type that has none,
 * which never matches, so a check against it fails closed.
 */
export function identity(st: FileStat, precise: boolean): string {
	return formatStatLine(st, precise) ?? "?";
}
