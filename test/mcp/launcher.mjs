/**
 * `keel serve` without the CLI: the same options, straight into runServe from the build. The tests
 * spawn this so they do not depend on how bin/keel.js wires `serve`.
 *   node test/mcp/launcher.mjs [--root DIR] [--allow P]... [--allow-read P]... [--profile pi|unified]
 *                              [--http PORT] [--host HOST]
 */
import { parseArgs } from "node:util";
import { runServe } from "../../dist/adapters/mcp/index.js";

const { values } = parseArgs({
	options: {
		root: { type: "string" },
		allow: { type: "string", multiple: true },
		"allow-read": { type: "string", multiple: true },
		profile: { type: "string" },
		http: { type: "string" },
		host: { type: "string" },
	},
});

process.exitCode = await runServe(
	{
		root: values.root,
		allow: values.allow,
		allowRead: values["allow-read"],
		profile: values.profile ?? "pi",
	},
	{ http: values.http === undefined ? undefined : Number(values.http), host: values.host },
);
