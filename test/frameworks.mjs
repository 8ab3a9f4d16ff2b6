// The frameworks and sandbox SDKs only tests and examples use live in test/package.json (its own
// lockfile; `npm run install:frameworks`), so a clone's `npm install` stays small. Test files under
// test/ find them by Node's own lookup (test/node_modules); keel's adapters in src/ and dist/ load
// their framework by a bare import, which this module redirects to test/node_modules: as a Vite
// plugin for vitest (vitest.config.ts), as a Node resolve hook for the examples (examples/run-all.mjs).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const TEST_DIR = dirname(fileURLToPath(import.meta.url));
const MANIFEST = join(TEST_DIR, "package.json");

/** The packages test/package.json installs. */
export const FRAMEWORK_PACKAGES = Object.keys(JSON.parse(readFileSync(MANIFEST, "utf8")).dependencies);

/** How to install them, for a skip message. */
export const INSTALL_FRAMEWORKS = "npm run install:frameworks";

/**
 * Whether every dependency of `dir`'s package.json is found from `dir` by Node's lookup
 * (dir/node_modules, then up): the frameworks from test/, the bench's chart packages from bench/.
 */
export function installedFrom(dir) {
	const names = Object.keys(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).dependencies);
	return names.every((name) => {
		for (let at = dir; ; at = dirname(at)) {
			if (existsSync(join(at, "node_modules", name, "package.json"))) return true;
			if (dirname(at) === at) return false;
		}
	});
}

/** Whether the frameworks are installed for the tests (test/node_modules, or the root's). */
export const frameworksInstalled = () => installedFrom(TEST_DIR);

/** Whether the scaling bench's chart packages are installed (bench/node_modules). */
export const chartsInstalled = () => installedFrom(join(TEST_DIR, "..", "bench"));

/** The package a bare specifier names: "@langchain/core/tools" → "@langchain/core". */
function packageOf(specifier) {
	const parts = specifier.split("/");
	return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const isFramework = (specifier) => FRAMEWORK_PACKAGES.includes(packageOf(specifier));

/** A Vite plugin: a framework imported from outside test/ resolves as if imported from test/. */
export function frameworksResolver() {
	return {
		name: "keel-frameworks",
		enforce: "pre",
		resolveId(source, importer, options) {
			if (!importer || !isFramework(source) || importer.startsWith(`${TEST_DIR}/`)) return null;
			return this.resolve(source, MANIFEST, { ...options, skipSelf: true });
		},
	};
}

/** A Node resolve hook (module.register): the same redirect, for a framework not found where imported. */
export async function resolve(specifier, context, nextResolve) {
	try {
		return await nextResolve(specifier, context);
	} catch (e) {
		if (e?.code !== "ERR_MODULE_NOT_FOUND" || !isFramework(specifier)) throw e;
		return nextResolve(specifier, { ...context, parentURL: pathToFileURL(MANIFEST).href });
	}
}
