/**
 * The watchdog against a leftover that keeps respawning after keel is SIGKILLed: a `setsid` chain in
 * which each process starts the next before it sleeps, for about 3 s. Each pass of the sweep kills
 * what it finds, while the chain's newest process may already be starting the next one; the
 * watchdog must keep passing until one finds nothing tagged, for up to WATCHDOG_SECONDS (it used to
 * stop after 8 passes, which fast passes use up in a fraction of a second). Real processes, found
 * by the session tag in their environments, as the watchdog finds them.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findTagged, killTagged, SESSION_TAG, WATCHDOG_SECONDS } from "../../src/backend/leftovers.js";
import { runKeel } from "../fixtures/keel-cli.js";
import { waitFor } from "../fixtures/processes.js";

const SETSID = ["/usr/bin/setsid", "/bin/setsid"].find((p) => existsSync(p));

let dir: string;
let tag = "";
beforeEach(async () => {
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-watchdog-")));
});
afterEach(async () => {
	// Whatever a failing test left (the chain stops spawning by itself after ~3 s).
	if (tag) await killTagged(SESSION_TAG, tag);
	tag = "";
	await rm(dir, { recursive: true, force: true });
});

/** Starts the next link until second $1 (date +%s), then sleeps: every link stays alive, tagged. */
const HOP = `[ "$(date +%s)" -lt "$1" ] || exec sleep 1000
setsid sh "$0" "$1" </dev/null >/dev/null 2>&1 &
exec sleep 1000
`;

describe.skipIf(!SETSID)("local: keel killed with SIGKILL, a leftover that keeps respawning", () => {
	it(`the watchdog keeps at it until nothing tagged is left, within ${WATCHDOG_SECONDS} s`, async () => {
		await writeFile(join(dir, "hop.sh"), HOP);
		const command = `echo "$${SESSION_TAG}" > tag; setsid sh hop.sh $(( $(date +%s) + 3 )) </dev/null >/dev/null 2>&1 & sleep 1000`;
		const line = JSON.stringify({ tool: "bash", args: { command } });
		let killedAt = 0;
		const run = await runKeel(dir, ["batch", "--root", dir], {
			input: `${line}\n`,
			during: async (child) => {
				const started = await waitFor(() => existsSync(join(dir, "tag")), 10_000);
				expect(started, "the command never started").toBe(true);
				tag = (await readFile(join(dir, "tag"), "utf8")).trim().split("=").pop() ?? "";
				expect(tag).toMatch(/^[0-9a-f]+$/);
				// The chain is running: a few links born.
				expect(await waitFor(() => findTagged(SESSION_TAG, tag).length >= 5, 10_000)).toBe(true);
				child.kill("SIGKILL");
				killedAt = Date.now();
			},
		});
		expect(run.code).toBe(null);
		const gone = await waitFor(
			() => findTagged(SESSION_TAG, tag).length === 0,
			(WATCHDOG_SECONDS + 1) * 1000,
		);
		const left = findTagged(SESSION_TAG, tag);
		expect(gone, `${left.length} tagged process(es) ${Date.now() - killedAt} ms after keel died`).toBe(true);
		// And none appears later: nothing was left to start one.
		await new Promise((r) => setTimeout(r, 500));
		expect(findTagged(SESSION_TAG, tag)).toEqual([]);
	}, 30_000);
});
