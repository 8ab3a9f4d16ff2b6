/**
 * Which python3 the worker runs on: $KEEL_PYTHON, else /usr/bin/python3, else python3 on PATH.
 * /usr/bin/python3 comes before PATH because a pyenv shim there costs ~350 ms per start.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import { KeelError } from "../boundary/errors.js";

async function isExecutableFile(path: string): Promise<boolean> {
	try {
		await access(path, constants.X_OK);
		return (await stat(path)).isFile();
	} catch {
		return false;
	}
}

async function onPath(name: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
	for (const dir of (env.PATH ?? "").split(delimiter)) {
		if (!dir) continue;
		const candidate = join(dir, name);
		if (await isExecutableFile(candidate)) return candidate;
	}
	return undefined;
}

/** The interpreter's absolute path; BACKEND_UNAVAILABLE naming the fix when there is none. */
export async function findInterpreter(env: NodeJS.ProcessEnv, configured?: string): Promise<string> {
	const wanted = configured ?? env.KEEL_PYTHON;
	if (wanted) {
		const found = wanted.includes("/")
			? (await isExecutableFile(wanted)) && isAbsolute(wanted)
				? wanted
				: undefined
			: await onPath(wanted, env);
		if (found) return found;
		throw new KeelError(
			"BACKEND_UNAVAILABLE",
			`The Python interpreter ${JSON.stringify(wanted)} (${configured ? "configured" : "KEEL_PYTHON"}) is not an executable file; set KEEL_PYTHON to an absolute path of python3.`,
		);
	}
	if (await isExecutableFile("/usr/bin/python3")) return "/usr/bin/python3";
	const found = await onPath("python3", env);
	if (found) return found;
	throw new KeelError(
		"BACKEND_UNAVAILABLE",
		"No Python interpreter found (tried /usr/bin/python3 and python3 on PATH); install python3 or set KEEL_PYTHON.",
	);
}
