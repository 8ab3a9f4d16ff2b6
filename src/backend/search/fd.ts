/** The fd engine for find: fd's parallel walk, every entry read and sorted before the first `limit`. */
import { backendFact } from "../../boundary/backend-facts.js";
import type { KeelError } from "../../boundary/errors.js";
import { pathFact } from "../../boundary/path-facts.js";
import type { FindOutcome, FindRequest } from "../types.js";
import type { FdTool } from "./detect.js";
import { escapeGlob, findGlobTarget, nestedTooDeep, tooDeepLine } from "./patterns.js";
import { type ArgvRunner, runCollect, runUntil, startingPoint } from "./runner.js";
import { comparePaths } from "./semantics.js";

export function fdArgv(fd: FdTool, req: FindRequest): string[] {
	// --show-errors: a directory fd cannot read is otherwise skipped in silence (see tooDeepLine).
	const argv = [
		fd.path,
		"--glob",
		"--color=never",
		"--hidden",
		"--case-sensitive",
		"--print0",
		"--show-errors",
	];
	argv.push("--exclude", ".git");
	if (fd.noGlobalIgnoreFile) argv.push("--no-global-ignore-file");
	if (fd.noRequireGit) argv.push("--no-require-git");
	const target = findGlobTarget(req.pattern);
	let pattern = target.glob;
	if (target.fullPath) {
		// --full-path matches the absolute path: anchor the pattern at the search directory.
		argv.push("--full-path");
		pattern = `${req.path === "/" ? "" : escapeGlob(req.path)}/${target.glob}`;
	}
	argv.push("--", pattern, req.path);
	return argv;
}

async function fdFailure(run: ArgvRunner, stderr: string, path: string): Promise<KeelError> {
	if (stderr.includes("error parsing glob")) {
		return backendFact("pattern-invalid", { reason: stderr.trim(), stderr });
	}
	if (stderr.includes("is not a directory")) {
		// fd says the same for a missing path and a file: ask the transport which one it is.
		const exists = await runCollect(run, ["test", "-e", path]).then(
			(r) => r.exitCode === 0,
			() => false,
		);
		return pathFact(exists ? "not-a-directory" : "not-found", path);
	}
	return backendFact("search-tool-failed", { tool: "fd", reason: stderr.trim(), stderr }, { path });
}

/**
 * fd output is unordered (parallel walk), so every entry is read and sorted before the first
 * `limit` are kept; the JS engine walks in that same order and can stop early.
 */
export async function fdFind(run: ArgvRunner, fd: FdTool, req: FindRequest): Promise<FindOutcome> {
	const { root, messages } = startingPoint(req);
	const chunks: Buffer[] = [];
	let stderr = "";
	const { exitCode, timedOut } = await runUntil(
		run,
		fdArgv(fd, { ...req, path: root }),
		"fd",
		req.signal,
		() => ({
			onStdout: (c) => chunks.push(c),
			onStderr: (c) => {
				stderr += c.toString("utf8");
			},
		}),
		req.stop,
	);
	// fd reports its own failures as "[fd error]: ..."; other non-zero exits keep the output.
	if (!timedOut && exitCode !== 0 && (stderr.includes("[fd error]") || chunks.length === 0)) {
		throw await fdFailure(run, messages(stderr), req.path);
	}
	const tooDeep = tooDeepLine(stderr);
	if (!timedOut && tooDeep) throw nestedTooDeep(req.path, tooDeep);
	const prefix = root.endsWith("/") ? root : `${root}/`;
	const records = Buffer.concat(chunks).toString("utf8").split("\0");
	records.pop(); // "" after the last NUL, or a path cut short by the budget
	const paths = records
		.filter((p) => p.startsWith(prefix) && p.length > prefix.length)
		.map((p) => p.slice(prefix.length))
		.sort(comparePaths);
	const shown = paths.slice(0, req.limit);
	return {
		paths: shown,
		limitReached: paths.length > req.limit,
		engine: "fd",
		...(timedOut ? { timedOut } : {}),
	};
}
