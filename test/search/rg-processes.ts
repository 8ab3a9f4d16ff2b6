/**
 * rg processes on this host searching under `dir`, read from /proc: by a command line naming it
 * or a working directory inside it (rg started in a pinned directory searches "."), not by its
 * pattern, which many tests share.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

export function rgProcessesUnder(dir: string): string[] {
	const found: string[] = [];
	for (const entry of readdirSync("/proc")) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
			if (!/(^|\/)rg$/.test(argv[0])) continue;
			const cwd = readlinkSync(`/proc/${entry}/cwd`);
			if (
				cwd === dir ||
				cwd.startsWith(`${dir}/`) ||
				argv.some((a) => a === dir || a.startsWith(`${dir}/`))
			) {
				found.push(`${entry}: ${argv.join(" ")} (in ${cwd})`);
			}
		} catch {
			// gone meanwhile, or not ours to read
		}
	}
	return found;
}
