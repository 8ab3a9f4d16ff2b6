/**
 * The tool text a model is sent every turn, per profile: the characters of the tools as listed
 * (name, description, JSON Schema; what `keel tools --json` and MCP tools/list carry), per tool and
 * in total, beside pi's own seven tools (@mariozechner/pi-coding-agent, the dev dependency).
 *
 * Run: node bench/tool-text.mjs   (after `npm run build`)
 */
import * as pi from "@mariozechner/pi-coding-agent";
import { toolsJson } from "../dist/adapters/cli-help.js";
import { PROFILES, toolsForProfile } from "../dist/tools/registry.js";
import { markdownTable } from "./lib.mjs";

const piOwn = [
	pi.createReadToolDefinition,
	pi.createWriteToolDefinition,
	pi.createEditToolDefinition,
	pi.createBashToolDefinition,
	pi.createGrepToolDefinition,
	pi.createFindToolDefinition,
	pi.createLsToolDefinition,
].map((make) => {
	const t = make(process.cwd());
	return { name: t.name, description: t.description, parameters: t.parameters };
});

const rows = [];
for (const profile of PROFILES) {
	const tools = toolsForProfile(profile);
	const perTool = tools.map((t) => `${t.name} ${toolsJson([t]).length}`).join(", ");
	rows.push([profile, String(toolsJson(tools).length), perTool]);
}
rows.push([
	"pi 0.73's own tools",
	String(toolsJson(piOwn).length),
	piOwn.map((t) => `${t.name} ${toolsJson([t]).length}`).join(", "),
]);
console.log(markdownTable(["profile", "characters", "per tool"], rows));
