// Runs examples/mcp/mcp.json as an MCP client would: `node examples/mcp/client.mjs [DIR]`.
//
// mcp.json is the entry to put in a client's configuration (Claude Desktop, Claude Code, Cursor
// and others read this shape), with --root set to your project. This script starts that server
// over stdio with the MCP SDK's client, on DIR (default: a scratch directory), lists its tools and
// makes two calls.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = dirname(fileURLToPath(import.meta.url));
const config = JSON.parse(await readFile(join(here, "mcp.json"), "utf8")).mcpServers.keel;

const scratch = process.argv[2] ? undefined : await mkdtemp(join(tmpdir(), "keel-mcp-example-"));
const root = process.argv[2] ? resolve(process.argv[2]) : scratch;
if (scratch) await writeFile(join(scratch, "hello.txt"), "hello from keel over MCP\n");

const args = config.args.map((a) => (a === "/path/to/your/project" ? root : a));
// npx finds keel's bin from the repository (or from the project that installed keel).
// The server logs to stderr; a client shows it in its own log, here it is left out.
const transport = new StdioClientTransport({
	command: config.command,
	args,
	cwd: resolve(here, "../.."),
	stderr: "ignore",
});
const client = new Client({ name: "keel-example", version: "0.1.0" });
try {
	await client.connect(transport);
	const { tools } = await client.listTools();
	console.log(`tools: ${tools.map((t) => t.name).join(", ")}`);
	const ls = await client.callTool({ name: "ls", arguments: { path: "." } });
	console.log(`ls: ${ls.content[0].text}`);
	const bad = await client.callTool({ name: "read", arguments: { path: "/etc/passwd" } });
	console.log(`read outside the root: isError=${bad.isError} ${bad.content[0].text}`);
	if (!bad.isError) throw new Error("a read outside the root should fail");
} finally {
	await client.close();
	if (scratch) await rm(scratch, { recursive: true, force: true });
}
