/**
 * keel's bash as the Agents SDK's `Shell` (for `shellTool({ shell })`): each command of an action
 * is one keel bash call, so the bash policy, the output bounds, timeouts and kills are keel's.
 * keel merges stderr into stdout; a refused or failed call's text goes to stderr.
 */
import { bindTools, type ToolSource } from "../binding.js";
import type { Shell, ShellAction, ShellResult } from "./types.js";

type Output = ShellResult["output"][number];

/** keel's bash as the Agents SDK's `Shell`, for `shellTool({ shell })`. */
export function keelShell(session: ToolSource): Shell {
	const [bash] = bindTools(session, { only: ["bash"] });
	if (!bash) throw new Error("keel's Shell needs the bash tool, which this session's palette leaves out.");
	return {
		async run(action: ShellAction): Promise<ShellResult> {
			const output: Output[] = [];
			for (const command of action.commands) {
				const args =
					action.timeoutMs === undefined ? { command } : { command, timeout: action.timeoutMs / 1000 };
				const r = await bash.call(args);
				if (!r.isError) {
					output.push({ stdout: r.text, stderr: "", outcome: { type: "exit", exitCode: 0 } });
				} else if (r.error?.code === "TIMEOUT") {
					output.push({ stdout: "", stderr: r.text, outcome: { type: "timeout" } });
				} else {
					const exitCode = r.error?.details?.exitCode;
					output.push({
						stdout: "",
						stderr: r.text,
						outcome: { type: "exit", exitCode: typeof exitCode === "number" ? exitCode : null },
					});
				}
			}
			return { output };
		},
	};
}
