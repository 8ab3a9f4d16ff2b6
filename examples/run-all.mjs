// Runs every example as its own process and fails if any fails: `npm run examples` (CI runs it).
// An example whose framework is not installed is reported as skipped, not failed. The frameworks
// live in test/package.json (`npm run install:frameworks`): each example runs with a resolve hook
// that finds them there (test/frameworks.mjs).
import { spawn } from "node:child_process";
import { register } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..");
const hook = join(repo, "test", "frameworks-hook.mjs");
register("../test/frameworks.mjs", import.meta.url);

/** Each example: its file, its arguments, and the packages it needs beyond keel's own. */
const EXAMPLES = [
	{ file: "library.mjs", args: [], needs: [] },
	{ file: "library.mjs", args: [repo], needs: [] },
	{ file: "mcp/client.mjs", args: [], needs: ["@modelcontextprotocol/sdk/client/index.js"] },
	{ file: "frameworks/ai-sdk.mjs", args: [], needs: ["ai"] },
	{ file: "frameworks/openai-agents.mjs", args: [], needs: ["@openai/agents"] },
	{ file: "frameworks/langchain.mjs", args: [], needs: ["@langchain/core/messages", "langchain"] },
	{ file: "frameworks/mastra.mjs", args: [], needs: ["@mastra/core/agent", "ai"] },
	{ file: "frameworks/claude-agent-sdk.mjs", args: [], needs: ["@anthropic-ai/claude-agent-sdk"] },
];
const TIMEOUT_MS = 120_000;

function installed(specifier) {
	try {
		import.meta.resolve(specifier);
		return true;
	} catch {
		return false;
	}
}

function runExample(file, args) {
	return new Promise((resolve) => {
		const child = spawn(process.execPath, ["--import", hook, join(here, file), ...args], {
			cwd: repo,
			stdio: "pipe",
		});
		let out = "";
		child.stdout.on("data", (d) => {
			out += d;
		});
		child.stderr.on("data", (d) => {
			out += d;
		});
		const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			resolve({ code, signal, out });
		});
	});
}

let failed = 0;
for (const { file, args, needs } of EXAMPLES) {
	const name = [file, ...args.map((a) => relative(repo, a) || ".")].join(" ");
	const missing = needs.filter((n) => !installed(n));
	if (missing.length > 0) {
		console.log(`skip  ${name}: ${missing.join(", ")} not installed (npm run install:frameworks)`);
		continue;
	}
	const started = performance.now();
	const { code, signal, out } = await runExample(file, args);
	const took = ((performance.now() - started) / 1000).toFixed(1);
	const skipped = code === 0 && /^skipped: /m.test(out);
	console.log(`${code === 0 ? (skipped ? "skip" : "ok  ") : "FAIL"}  ${name} (${took} s)`);
	if (code !== 0) {
		failed++;
		console.log(out.replace(/^/gm, "      ") + (signal ? `      (killed by ${signal})\n` : ""));
	}
}
console.log(failed === 0 ? "examples: all ran" : `examples: ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
