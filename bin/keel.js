#!/usr/bin/env node
import { main } from "../dist/adapters/cli.js";

const code = await main(process.argv.slice(2), {
	stdout: (line) => process.stdout.write(`${line}\n`),
	stderr: (line) => process.stderr.write(`${line}\n`),
	stdin: process.stdin,
});
process.exitCode = code;
