// keel's pi extension entry (package.json "pi"): the built extension in dist/, or a loud failure.
// A fresh clone has no dist/: pi must report that keel is not loaded, never run its own tools while
// the user believes keel's do.
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const built = `${here}/dist/adapters/pi/extension.js`;

export default async function keelExtension(pi) {
	if (!existsSync(built)) {
		throw new Error(
			`keel is not built: ${built} is missing (a git clone has no dist/). Run "npm install" in ${here} ` +
				"(its prepare script builds keel), then start pi again. Until then keel's tools are not loaded.",
		);
	}
	const { default: extension } = await import(pathToFileURL(built).href);
	return extension(pi);
}
