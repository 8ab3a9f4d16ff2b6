#!/usr/bin/env node
import { main } from "../dist/adapters/cli.js";

// A reader that went away (`keel batch | head`) is not a crash: later lines are dropped.
process.stdout.on("error", (e) => {
	if (e.code !== "EPIPE") throw e;
});

const code = await main(process.argv.slice(2), {
	stdout: (line) => process.stdout.write(`${line}\n`),
	stderr: (line) => process.stderr.write(`${line}\n`),
	stdin: process.stdin,
});
process.exitCode = code;
