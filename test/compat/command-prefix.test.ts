/**
 * pi parity: pi's `commandPrefix` (its `shellCommandPrefix` setting) runs before every bash
 * command. keel's bash does the same through the library option, the CLI flag and, inside pi, pi's
 * own setting; the output matches pi's bash with the same prefix.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as pi from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/adapters/pi/load-config.js";
import { runKeel } from "../fixtures/keel-cli.js";
import { useWorkspace } from "../fixtures/workspace.js";

// Each test opens its session itself, with or without the prefix.
const ws = useWorkspace({ prefix: "keel-prefix-", session: false });

const PREFIX = "shopt -s expand_aliases\nalias greet='echo hello from prefix'\nexport KEEL_PREFIXED=yes";
const COMMAND = 'greet; echo "$KEEL_PREFIXED"; pwd';

function textOf(content: Array<{ type: string; text?: string }>): string {
	return content.map((c) => c.text ?? "").join("");
}

describe("bash commandPrefix", () => {
	it("runs before every command, as pi's bash runs it", async () => {
		const s = await ws().open({ commandPrefix: PREFIX });
		const keel = await s.call("bash", { command: COMMAND });
		const again = await s.call("bash", { command: "echo $KEEL_PREFIXED" });
		await s.close();
		const piBash = pi.createBashToolDefinition(ws().root, { commandPrefix: PREFIX });
		const piResult = await piBash.execute(
			"t1",
			{ command: COMMAND },
			undefined,
			undefined,
			undefined as never,
		);
		expect(keel.ok).toBe(true);
		if (!keel.ok) return;
		expect(textOf(keel.content)).toBe(`hello from prefix\nyes\n${ws().root}`);
		// pi keeps the output's final newline; keel drops it (its bash results end without one).
		expect(textOf(keel.content)).toBe(textOf(piResult.content as never).replace(/\n$/, ""));
		expect(again.ok && textOf(again.content)).toBe("yes");
	});

	it("without a prefix nothing runs first", async () => {
		const s = await ws().open();
		const r = await s.call("bash", { command: 'echo "[$KEEL_PREFIXED]"' });
		await s.close();
		expect(r.ok && textOf(r.content)).toBe("[]");
	});

	it("the CLI takes --command-prefix", async () => {
		const r = await runKeel(ws().root, [
			"call",
			"bash",
			JSON.stringify({ command: "echo $P" }),
			"--command-prefix",
			"P=set",
		]);
		expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, content: "set" });
	});

	it("inside pi, pi's shellCommandPrefix setting is used (project over global, as pi merges)", async () => {
		const agent = ws().path("agent");
		const project = ws().path("project");
		await mkdir(agent);
		await mkdir(join(project, ".pi"), { recursive: true });
		await writeFile(join(agent, "settings.json"), JSON.stringify({ shellCommandPrefix: "X=global" }));
		const env = { PI_CODING_AGENT_DIR: agent };
		expect(loadConfig(project, () => undefined, env).commandPrefix).toBe("X=global");
		await writeFile(
			join(project, ".pi", "settings.json"),
			JSON.stringify({ shellCommandPrefix: "X=project" }),
		);
		expect(loadConfig(project, () => undefined, env).commandPrefix).toBe("X=project");
		await writeFile(join(agent, "settings.json"), JSON.stringify({ keel: { profile: "unified" } }));
		await rm(join(project, ".pi", "settings.json"));
		const c = loadConfig(project, () => undefined, env);
		expect(c.commandPrefix).toBeUndefined();
		expect(c.profile).toBe("unified");
	});
});
