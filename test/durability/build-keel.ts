/**
 * A private, single-file build of keel for child processes.
 *
 * Children import a bundle of the current src/ written into the test's own temp directory rather
 * than /work/main/dist: other test files (and other people's `npm test`) rewrite dist/ in place
 * while these children start, and a child that imports a half-written module fails for reasons
 * that have nothing to do with keel. A single file also starts several times faster than the
 * hundreds of ESM modules in dist/ + node_modules, which is what lets the crash test restart its
 * child 200 times. `runNode` runs such a child to its end. The bundle is made with rolldown (vite's bundler); if it is unavailable the
 * library is compiled with tsc into the temp directory instead.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/**
 * Build keel into `outDir` and return the absolute path of the module a child should import:
 * the library, or the module `entry` (a path under src/, without its extension) and what it uses.
 */
export async function buildKeel(outDir: string, entry = "index"): Promise<string> {
	const file = join(outDir, entry === "index" ? "keel.mjs" : `${entry.replaceAll("/", "-")}.mjs`);
	try {
		const { rolldown } = await import("rolldown");
		const bundle = await rolldown({
			input: join(REPO, "src", `${entry}.ts`),
			platform: "node",
			logLevel: "silent",
		});
		try {
			// One file even where the source imports lazily (a single file is the point).
			await bundle.write({ file, format: "esm", codeSplitting: false } as Parameters<typeof bundle.write>[0]);
		} finally {
			await bundle.close();
		}
		linkBeside(outDir);
		return file;
	} catch {
		// Fall back to the project's own build, into a private directory.
		const build = join(outDir, "tsc-build");
		try {
			execFileSync("npx", ["tsc", "-p", "tsconfig.build.json", "--outDir", build], {
				cwd: REPO,
				stdio: "pipe",
			});
		} catch (e) {
			// tsc emits despite type errors in files other engineers are editing; only a missing
			// output is fatal.
			if (!existsSync(join(build, `${entry}.js`))) throw e;
		}
		linkBeside(outDir);
		return join(build, `${entry}.js`);
	}
}

/** What the build loads at run time is found from beside it: koffi (node_modules), the programs keel
 * sends to a host and the Python worker (files under src/). */
function linkBeside(outDir: string): void {
	for (const name of ["node_modules", "src"])
		if (!existsSync(join(outDir, name))) symlinkSync(join(REPO, name), join(outDir, name));
}

/** Run `node ...args` to its end and collect what it printed. */
export function runNode(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
	return new Promise((resolve, reject) => {
		const proc = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		proc.stdout.setEncoding("utf8").on("data", (d: string) => {
			stdout += d;
		});
		proc.stderr.setEncoding("utf8").on("data", (d: string) => {
			stderr += d;
		});
		proc.once("error", reject);
		proc.once("close", (code) => resolve({ code, stdout, stderr }));
	});
}
