/**
 * Tree-sitter grammars, loaded on first use: the one place keel turns a language name into a
 * parser. web-tree-sitter runs the parser runtime as WebAssembly (no native build); the grammars
 * are prebuilt WASM files from npm (@cursorless/tree-sitter-wasms; TOML from
 * @tree-sitter-grammars/tree-sitter-toml, an optional dependency).
 *
 * Small API for any caller (the edit check here, a shell-command parser elsewhere):
 *   const grammars = new Grammars();
 *   const tree = await grammars.parse("bash", text);   // undefined: no grammar for that name
 *   ...; tree.delete();
 *
 * A whole parse of a large file takes tens of milliseconds of one thread; parseInSlices does it
 * on a parser of its own in slices of a few milliseconds, giving the event loop back between them,
 * for work nobody waits on (a tree made ahead of an edit).
 *
 * What is shared process-wide, and why that is safe: web-tree-sitter's runtime is one WebAssembly
 * instance per process by its own design (Parser.init), and a compiled grammar (Language) is
 * immutable once loaded, so the promise of each is kept in a module-level map that is only ever
 * added to. Everything with state (a Parser holds its language and its last parse) belongs to a
 * Grammars instance, one per session.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Language, Parser, Tree } from "web-tree-sitter";

/** Where each grammar's wasm is: [package, file inside it]. */
const WASM: Record<string, [string, string]> = {
	typescript: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-typescript.wasm"],
	tsx: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-tsx.wasm"],
	javascript: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-javascript.wasm"],
	python: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-python.wasm"],
	go: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-go.wasm"],
	rust: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-rust.wasm"],
	java: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-java.wasm"],
	c: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-c.wasm"],
	cpp: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-cpp.wasm"],
	c_sharp: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-c_sharp.wasm"],
	ruby: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-ruby.wasm"],
	php: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-php.wasm"],
	bash: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-bash.wasm"],
	json: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-json.wasm"],
	yaml: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-yaml.wasm"],
	toml: ["@tree-sitter-grammars/tree-sitter-toml", "tree-sitter-toml.wasm"],
	html: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-html.wasm"],
	css: ["@cursorless/tree-sitter-wasms", "out/tree-sitter-css.wasm"],
};

/** The grammar names this module can load. */
export const GRAMMAR_NAMES: readonly string[] = Object.keys(WASM);

const require = createRequire(import.meta.url);

/** web-tree-sitter itself, imported when the first grammar is asked for (Node keeps the module). */
export const treeSitter = () => import("web-tree-sitter");

/** The runtime's one-time start (process-wide by web-tree-sitter's design). */
let runtime: Promise<void> | undefined;
/** Compiled grammars by name: immutable once loaded, only ever added to (see the header). */
const loaded = new Map<string, Promise<Language | undefined>>();

function wasmPath(name: string): string | undefined {
	const spec = WASM[name];
	if (!spec) return undefined;
	try {
		return join(dirname(require.resolve(`${spec[0]}/package.json`)), spec[1]);
	} catch {
		return undefined; // The package is not installed (an optional one): no grammar.
	}
}

function loadLanguage(name: string): Promise<Language | undefined> {
	let p = loaded.get(name);
	if (!p) {
		const path = wasmPath(name);
		runtime ??= treeSitter().then((ts) => ts.Parser.init());
		p = path
			? runtime.then(async () => (await treeSitter()).Language.load(path))
			: Promise.resolve(undefined);
		// A failed load is not cached as a failure forever: the next call tries again.
		p.catch(() => loaded.delete(name));
		loaded.set(name, p);
	}
	return p;
}

/** One session's parsers, one per grammar, made on first use. */
export class Grammars {
	private readonly parsers = new Map<string, Parser>();
	/** Parsers of the sliced parses: a halted parse resumes on its parser's next call, so it needs its own. */
	private readonly slicers = new Map<string, Parser>();
	/** The sliced parses run one at a time (a halted parser must not start another text). */
	private slicing: Promise<unknown> = Promise.resolve();

	/** The parser for `name`, or undefined when there is no such grammar (or it is not installed). */
	async parser(name: string): Promise<Parser | undefined> {
		const have = this.parsers.get(name);
		if (have) return have;
		const language = await loadLanguage(name);
		if (!language) return undefined;
		const { Parser } = await treeSitter();
		// Another call may have made it while this one waited for the grammar.
		const raced = this.parsers.get(name);
		if (raced) return raced;
		const parser = new Parser();
		parser.setLanguage(language);
		this.parsers.set(name, parser);
		return parser;
	}

	/** `text` parsed with grammar `name` (the caller deletes the tree), or undefined without a grammar. */
	async parse(name: string, text: string, old?: Tree): Promise<Tree | undefined> {
		const parser = await this.parser(name);
		return parser?.parse(text, old) ?? undefined;
	}

	/**
	 * `text` parsed whole with grammar `name` in slices of about `sliceMs` of work, the event loop
	 * free between them; undefined without a grammar, or when `wanted` turns false between slices
	 * (the session closed). Once `urgent` turns true (someone waits for the tree) the rest is
	 * parsed in one go. The caller deletes the tree.
	 */
	parseInSlices(
		name: string,
		text: string,
		sliceMs: number,
		wanted: () => boolean,
		urgent: () => boolean,
	): Promise<Tree | undefined> {
		const run = async (): Promise<Tree | undefined> => {
			const language = await loadLanguage(name);
			if (!language || !wanted()) return undefined;
			let parser = this.slicers.get(name);
			if (!parser) {
				const { Parser } = await treeSitter();
				parser = new Parser();
				parser.setLanguage(language);
				this.slicers.set(name, parser);
			}
			for (;;) {
				const start = performance.now();
				// A progress callback that answers true halts the parse; the next call resumes it.
				const halt = (() => !urgent() && performance.now() - start > sliceMs) as () => void;
				const tree = parser.parse(text, null, { progressCallback: halt });
				if (tree) return tree;
				await new Promise((resolve) => setImmediate(resolve));
				if (!wanted()) {
					// Not resumed later: the next text starts from its beginning (unless close freed it).
					if (this.slicers.get(name) === parser) parser.reset();
					return undefined;
				}
			}
		};
		const job = this.slicing.then(run, run);
		this.slicing = job.catch(() => undefined);
		return job;
	}

	/** Frees the parsers (their memory lives in the WebAssembly heap, not the JS one). */
	close(): void {
		for (const p of [...this.parsers.values(), ...this.slicers.values()]) p.delete();
		this.parsers.clear();
		this.slicers.clear();
	}
}
