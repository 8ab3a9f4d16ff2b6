/**
 * Checks before any draft code runs: the path is resolved and authorized
 * through a path guard (a session's, or one over the given roots), the draft is a regular
 * JavaScript file of bounded size, and a package.json next to it (which Node reads to decide how to
 * load the draft) is bounded and well formed. Every refusal is a KeelError naming the problem.
 */
import { readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { extname, posix, resolve } from "node:path";
import { createLocalFs } from "../backend/local/fs.js";
import { KeelError } from "../boundary/errors.js";
import { fromSystemError } from "../boundary/system-errors.js";
import { PathGuard } from "../safety/path-guard.js";

export const MAX_DRAFT_BYTES = 1024 * 1024;
export const MAX_PACKAGE_JSON_BYTES = 64 * 1024;
const MAX_PACKAGE_NAME = 214;
const MAX_PACKAGE_FIELD = 256;

const RUNNABLE = new Set([".js", ".mjs", ".cjs"]);
const TYPESCRIPT = new Set([".ts", ".mts", ".cts", ".tsx"]);

export interface PackageFacts {
	name?: string;
	version?: string;
	type?: "module" | "commonjs";
	/** pi.extensions from the package.json, when listed. */
	piExtensions?: string[];
}

export interface Draft {
	/** Canonical path of the draft. */
	path: string;
	/** The allowed root that holds it: the child may read there (relative imports, node_modules). */
	root: string;
	bytes: number;
	package?: PackageFacts;
}

/** What a draft's check needs of a session: its path guard, and which backend holds its files. */
export interface DraftSession {
	readonly backend: { readonly kind: string; readonly localFiles?: boolean };
	readonly guard: PathGuard;
}

export interface PreflightOptions {
	/** Resolve through this session's guard (its files must be on this machine). */
	session?: DraftSession;
	/** Without a session: the allowed roots (the first is the workspace; default: the process cwd). */
	roots?: string[];
	maxBytes?: number;
}

async function guardFor(opts: PreflightOptions): Promise<PathGuard> {
	if (opts.session) {
		const { kind, localFiles } = opts.session.backend;
		if (!localFiles) {
			throw new KeelError(
				"INVALID_ARGS",
				`Extension smoke tests run drafts on this machine; this session's files are on its ${kind} backend. Copy the draft here first.`,
			);
		}
		return opts.session.guard;
	}
	const roots = (opts.roots?.length ? opts.roots : [process.cwd()]).map((r) => resolve(r));
	return PathGuard.create(createLocalFs(), { roots, home: homedir() });
}

/** Node's permission flags take comma-separated lists (Node 20): a path with a comma cannot be granted. */
function grantable(path: string, what: string): void {
	if (path.includes(",")) {
		throw new KeelError(
			"INVALID_ARGS",
			`${what} ${path} contains a comma, which the smoke test cannot grant read access to; move the draft.`,
			{ path },
		);
	}
}

function invalidPackage(path: string, problem: string): KeelError {
	return new KeelError(
		"INVALID_ARGS",
		`${path} next to the draft is not a usable package.json: ${problem}. Fix it or remove it.`,
		{ path },
	);
}

function stringField(
	pkg: Record<string, unknown>,
	key: string,
	max: number,
	path: string,
): string | undefined {
	const v = pkg[key];
	if (v === undefined) return undefined;
	if (typeof v !== "string") throw invalidPackage(path, `"${key}" must be a string`);
	if (v.length > max) throw invalidPackage(path, `"${key}" is longer than ${max} characters`);
	return v;
}

async function checkPackageJson(guard: PathGuard, dir: string): Promise<PackageFacts | undefined> {
	const input = posix.join(dir, "package.json");
	let target: string;
	try {
		const r = await guard.resolve(input, "read");
		if (!r.exists) return undefined;
		target = r.canonical;
	} catch (e) {
		if (e instanceof KeelError && e.code === "NOT_FOUND") return undefined;
		throw e;
	}
	const st = await stat(target).catch((e) => {
		throw fromSystemError(e, input);
	});
	if (!st.isFile()) throw invalidPackage(input, "it is not a regular file");
	if (st.size > MAX_PACKAGE_JSON_BYTES)
		throw invalidPackage(input, `it is larger than ${MAX_PACKAGE_JSON_BYTES} bytes`);
	const text = await readFile(target, "utf8").catch((e) => {
		throw fromSystemError(e, input);
	});
	let pkg: unknown;
	try {
		pkg = JSON.parse(text);
	} catch (e) {
		throw invalidPackage(input, `it is not valid JSON (${(e as Error).message})`);
	}
	if (typeof pkg !== "object" || pkg === null || Array.isArray(pkg))
		throw invalidPackage(input, "it must be a JSON object");
	const p = pkg as Record<string, unknown>;
	const name = stringField(p, "name", MAX_PACKAGE_NAME, input);
	const version = stringField(p, "version", MAX_PACKAGE_FIELD, input);
	const type = stringField(p, "type", MAX_PACKAGE_FIELD, input);
	if (type !== undefined && type !== "module" && type !== "commonjs")
		throw invalidPackage(input, `"type" must be "module" or "commonjs" (got "${type.slice(0, 40)}")`);
	for (const key of ["dependencies", "devDependencies", "peerDependencies", "exports", "imports"]) {
		const v = p[key];
		if (
			v !== undefined &&
			(typeof v !== "object" || v === null) &&
			!(key === "exports" && typeof v === "string")
		)
			throw invalidPackage(input, `"${key}" must be an object`);
	}
	let piExtensions: string[] | undefined;
	if (p.pi !== undefined) {
		if (typeof p.pi !== "object" || p.pi === null || Array.isArray(p.pi))
			throw invalidPackage(input, '"pi" must be an object');
		const ext = (p.pi as Record<string, unknown>).extensions;
		if (ext !== undefined) {
			if (
				!Array.isArray(ext) ||
				ext.length > 100 ||
				ext.some((x) => typeof x !== "string" || x.length > 4096)
			)
				throw invalidPackage(input, '"pi.extensions" must be a list of at most 100 paths');
			piExtensions = ext as string[];
		}
	}
	const facts: PackageFacts = {};
	if (name !== undefined) facts.name = name;
	if (version !== undefined) facts.version = version;
	if (type !== undefined) facts.type = type as PackageFacts["type"];
	if (piExtensions) facts.piExtensions = piExtensions;
	return facts;
}

/** Resolve and check the draft; throws a KeelError before anything runs. */
export async function preflightDraft(input: string, opts: PreflightOptions = {}): Promise<Draft> {
	const guard = await guardFor(opts);
	const ext = extname(typeof input === "string" ? input : "").toLowerCase();
	const resolved = await guard.resolve(input, "read");
	const shown = resolved.input;
	if (!resolved.exists) {
		throw new KeelError("NOT_FOUND", `No such file: ${shown}. Write the draft first, then smoke-test it.`, {
			path: shown,
		});
	}
	// The name the caller gave decides, and the file it resolves to must agree (a link named x.js to x.ts).
	for (const e of new Set([ext, extname(resolved.canonical).toLowerCase()])) {
		if (TYPESCRIPT.has(e)) {
			throw new KeelError(
				"INVALID_ARGS",
				`${shown} is TypeScript, which Node 20 cannot run as it is; compile it first (tsc, esbuild) and smoke-test the .js or .mjs file.`,
				{ path: shown },
			);
		}
		if (!RUNNABLE.has(e)) {
			throw new KeelError(
				"INVALID_ARGS",
				`${shown} is not a .js, .mjs or .cjs file; a pi extension draft is JavaScript exporting a default factory.`,
				{ path: shown },
			);
		}
	}
	const st = await stat(resolved.canonical).catch((e) => {
		throw fromSystemError(e, shown);
	});
	if (st.isDirectory())
		throw new KeelError("IS_DIRECTORY", `${shown} is a directory; give the draft's file.`, { path: shown });
	if (!st.isFile())
		throw new KeelError("NOT_A_FILE", `${shown} is not a regular file; give the draft's file.`, {
			path: shown,
		});
	const max = opts.maxBytes ?? MAX_DRAFT_BYTES;
	if (st.size > max) {
		throw new KeelError(
			"INVALID_ARGS",
			`${shown} is ${st.size} bytes; a draft may be at most ${max} bytes. Split it or trim it.`,
			{ path: shown },
		);
	}
	grantable(resolved.root, "The draft's root");
	grantable(resolved.canonical, "The draft");
	const pkg = await checkPackageJson(guard, posix.dirname(resolved.canonical));
	return {
		path: resolved.canonical,
		root: resolved.root,
		bytes: st.size,
		...(pkg ? { package: pkg } : {}),
	};
}
