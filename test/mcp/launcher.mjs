/**
 * `keel serve` without the CLI: the same options, straight into runServe from the build. The tests
 * spawn this so they do not depend on how bin/keel.js wires `serve`.
 *   node test/mcp/launcher.mjs [--root DIR] [--allow P]... [--allow-read P]... [--profile pi|unified]
 *                              [--http PORT] [--host HOST] [--token-file F] [--token-dir D]
 *                              [--max-message-mib N] [--client-roots] [--heartbeat-ms N]
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
		"token-file": { type: "string" },
		"token-dir": { type: "string" },
		"max-message-mib": { type: "string" },
		"client-roots": { type: "boolean" },
		"heartbeat-ms": { type: "string" },
	},
});

const num = (v) => (v === undefined ? undefined : Number(v));
process.exitCode = await runServe(
	{
		root: values.root,
		allow: values.allow,
		allowRead: values["allow-read"],
		profile: values.profile ?? "pi",
	},
	{
		http: num(values.http),
		host: values.host,
		tokenFile: values["token-file"],
		tokenDir: values["token-dir"],
		maxMessageBytes:
			values["max-message-mib"] === undefined ? undefined : num(values["max-message-mib"]) * 1024 * 1024,
		clientRoots: values["client-roots"] ? "always" : undefined,
		server: { heartbeatMs: num(values["heartbeat-ms"]) },
	},
);
