/**
 * The path guard: every path a tool touches is resolved here.
 *
 * Input is expanded as pi does (`@` prefix, `~`), made absolute against the workspace root (never
 * the process cwd), canonicalized through the backend with symlinks followed (a dangling link to
 * its literal target, loops detected), and then checked for containment by path components.
 */
import { posix } from "node:path";
import type { FileOps, FileStat } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import { below, under } from "./canonical-paths.js";
import { ProtectedPaths } from "./protected-paths.js";

export type Access = "read" | "write";

export interface GuardConfig {
	/** Read-write roots; the first one is the workspace root that relative paths resolve against. */
	roots: string[];
	readOnlyRoots?: string[];
	/** Home directory used for `~` expansion. */
	home: string;
	/** Allow writes to protected paths (git hooks and config, tool config, shell rc files). */
	allowProtected?: boolean;
	/** More protected paths (absolute, or relative to the workspace), each with everything below it. */
	protectedPaths?: string[];
}

export interface ResolvedPath {
	/** The path as the model gave it. */
	input: string;
	/** Absolute, canonical (symlinks resolved) path. */
	canonical: string;
	/** The root that contains it. */
	root: string;
	/** Path relative to that root, POSIX separators ("" for the root itself). */
	relative: string;
	/** Whether the path existed when it was resolved. */
	exists: boolean;
}

const MAX_LINK_HOPS = 40;
const MAX_PATH_LENGTH = 4096;
const MAX_NAME_BYTES = 255;

/** Expand pi's conventions: a leading `@` is dropped, `~` is the home directory. */
export function expandInput(input: string, home: string): string {
	const p = input.startsWith("@") ? input.slice(1) : input;
	if (p === "~") return home;
	if (p.startsWith("~/")) return home + p.slice(1);
	return p;
}

function hasErrno(e: unknown, code: string): boolean {
	return (e as NodeJS.ErrnoException)?.code === code;
}

export class PathGuard {
	readonly roots: readonly string[];
	readonly readOnlyRoots: readonly string[];
	readonly workspace: string;
	private readonly home: string;
	private readonly allowProtected: boolean;
	private readonly protection: ProtectedPaths;

	private constructor(
		private readonly fs: FileOps,
		cfg: Required<GuardConfig>,
	) {
		this.roots = cfg.roots;
		this.readOnlyRoots = cfg.readOnlyRoots;
		this.workspace = cfg.roots[0];
		this.home = cfg.home;
		this.allowProtected = cfg.allowProtected;
		this.protection = new ProtectedPaths(fs, {
			workspace: cfg.roots[0],
			home: cfg.home,
			extra: cfg.protectedPaths,
		});
	}

	/** Canonicalizes the roots themselves; a root that does not exist is a configuration error. */
	static async create(fs: FileOps, cfg: GuardConfig): Promise<PathGuard> {
		if (cfg.roots.length === 0) throw new KeelError("INVALID_ARGS", "At least one root is required.");
		const canon = async (r: string) => {
			try {
				const c = await fs.realpath(r);
				const st = await fs.stat(c);
				if (st.type !== "dir")
					throw new KeelError("NOT_DIRECTORY", `Root is not a directory: ${r}.`, { path: r });
				return c;
			} catch (e) {
				if (e instanceof KeelError) throw e;
				throw new KeelError("NOT_FOUND", `Root does not exist: ${r}.`, { path: r });
			}
		};
		const roots = await Promise.all(cfg.roots.map(canon));
		const readOnlyRoots = await Promise.all((cfg.readOnlyRoots ?? []).map(canon));
		// From here on, operations below a root start from a handle on it (local files).
		fs.pinRoots?.([...roots, ...readOnlyRoots]);
		const protectedPaths = await Promise.all(
			(cfg.protectedPaths ?? []).map((p) => {
				const abs = posix.resolve(roots[0], p);
				return fs.realpath(abs).catch(() => abs);
			}),
		);
		return new PathGuard(fs, {
			roots,
			readOnlyRoots,
			home: cfg.home,
			allowProtected: cfg.allowProtected ?? false,
			protectedPaths,
		});
	}

	/** Validates shape and makes the path absolute (no filesystem access). */
	absolute(input: unknown): string {
		if (typeof input !== "string") {
			throw new KeelError("PATH_INVALID", "Path must be a string.");
		}
		if (input.length === 0) throw new KeelError("PATH_INVALID", "Path must not be empty.");
		if (input.includes("\0")) {
			throw new KeelError("PATH_INVALID", "Path contains a NUL byte; send the path without it.");
		}
		if (input.length > MAX_PATH_LENGTH) {
			throw new KeelError("PATH_INVALID", `Path is longer than ${MAX_PATH_LENGTH} characters.`);
		}
		const expanded = expandInput(input, this.home);
		for (const part of expanded.split("/")) {
			if (Buffer.byteLength(part) > MAX_NAME_BYTES) {
				throw new KeelError(
					"PATH_INVALID",
					`A path component is longer than ${MAX_NAME_BYTES} bytes; use a shorter name.`,
				);
			}
		}
		return posix.resolve(this.workspace, expanded);
	}

	/**
	 * Resolve and authorize `input` for `access`. Throws PATH_OUTSIDE_ROOTS, PATH_READ_ONLY,
	 * PATH_PROTECTED, PATH_LOOP or PATH_INVALID; never touches anything outside a lookup.
	 */
	async resolve(input: unknown, access: Access): Promise<ResolvedPath> {
		const abs = this.absolute(input);
		const { canonical, exists } = await this.canonicalize(abs);
		const resolved = this.authorize(input as string, abs, canonical, access, exists);
		await this.checkProtected(resolved, access);
		if (access === "write" && /\/\.?$/.test(input as string)) {
			throw new KeelError("IS_DIRECTORY", `${input} names a directory; give a file path.`, {
				path: input as string,
			});
		}
		return resolved;
	}

	private authorize(
		shown: string,
		abs: string,
		canonical: string,
		access: Access,
		exists: boolean,
	): ResolvedPath {
		const root = this.roots.find((r) => under(r, canonical));
		if (!root) {
			const ro = this.readOnlyRoots.find((r) => under(r, canonical));
			if (ro && access === "read") {
				return { input: shown, canonical, root: ro, relative: below(ro, canonical), exists };
			}
			if (ro) {
				throw new KeelError(
					"PATH_READ_ONLY",
					`${shown} is in a read-only root (${ro}); write inside ${this.workspace} instead.`,
					{ path: shown },
				);
			}
			// Only the path as given: where a link leads outside is not the model's to learn.
			const via = canonical === abs ? "" : " (through a symbolic link)";
			throw new KeelError(
				"PATH_OUTSIDE_ROOTS",
				`${shown} is outside the allowed roots${via}; use a path inside ${this.workspace}.`,
				{ path: shown },
			);
		}
		return { input: shown, canonical, root, relative: below(root, canonical), exists };
	}

	/** PATH_PROTECTED for a write to the protected set (protected-paths.ts), unless it is lifted. */
	private async checkProtected(r: ResolvedPath, access: Access): Promise<void> {
		if (access !== "write" || this.allowProtected) return;
		const why = await this.protection.reason(r.canonical, r.root, r.relative);
		if (!why) return;
		throw new KeelError(
			"PATH_PROTECTED",
			`${r.input} is a protected path: ${why}. It can only be changed when protected writes are allowed (allowProtected, --allow-protected).`,
			{ path: r.input },
		);
	}

	/**
	 * Like resolve, but the last component is kept as it is instead of followed: for removing a
	 * symlink itself. The parent is canonicalized and authorized for writing.
	 */
	async resolveEntry(input: unknown, access: Access): Promise<ResolvedPath> {
		const abs = this.absolute(input);
		const name = posix.basename(abs);
		if (abs === "/" || name === "." || name === "..") {
			throw new KeelError("PATH_INVALID", `${String(input)} does not name a file.`, { path: String(input) });
		}
		const parent = await this.canonicalize(posix.dirname(abs));
		const canonical = posix.join(parent.canonical, name);
		const checked = await this.authorize(input as string, abs, canonical, access, parent.exists);
		await this.checkProtected(checked, access);
		if (this.roots.includes(canonical) || this.readOnlyRoots.includes(canonical)) {
			throw new KeelError("PATH_INVALID", `${String(input)} is a root; name a file inside it.`, {
				path: String(input),
			});
		}
		return checked;
	}

	/**
	 * Canonical form of an absolute path: realpath when it exists; otherwise the deepest existing
	 * ancestor's realpath plus the rest, following dangling links to their literal targets.
	 */
	private async canonicalize(abs: string): Promise<{ canonical: string; exists: boolean }> {
		try {
			return { canonical: await this.fs.realpath(abs), exists: true };
		} catch (e) {
			if (hasErrno(e, "ELOOP")) throw this.loop(abs);
			if (!hasErrno(e, "ENOENT") && !hasErrno(e, "ENOTDIR")) {
				if (hasErrno(e, "EACCES"))
					throw new KeelError("PERMISSION_DENIED", `Permission denied: ${abs}.`, { path: abs });
				throw e;
			}
		}
		// Walk component by component: an entry may be a dangling symlink whose literal target
		// decides where a write would land.
		let pending = abs.split("/").filter(Boolean);
		let current = "/";
		// Most often only the last component is missing (a file about to be made): the walk starts
		// at its parent's realpath, one call where a remote backend would pay a round trip per
		// component. When the parent cannot be resolved the walk starts at "/".
		const parent = await this.fs.realpath(posix.dirname(abs)).catch(() => undefined);
		if (parent !== undefined && pending.length > 0) {
			current = parent;
			pending = pending.slice(-1);
		}
		let hops = 0;
		let exists = true;
		while (pending.length > 0) {
			const name = pending.shift()!;
			if (name === ".") continue;
			if (name === "..") {
				current = posix.dirname(current);
				continue;
			}
			const next = posix.join(current, name);
			if (!exists) {
				current = next;
				continue;
			}
			let st: FileStat;
			try {
				st = await this.fs.lstat(next);
			} catch (e) {
				if (hasErrno(e, "ENOENT") || hasErrno(e, "ENOTDIR")) {
					exists = false;
					current = next;
					continue;
				}
				throw e;
			}
			if (st.type === "symlink") {
				if (++hops > MAX_LINK_HOPS) throw this.loop(abs);
				const target = await this.fs.readlink(next);
				const targetParts = target.split("/").filter(Boolean);
				if (target.startsWith("/")) current = "/";
				pending = [...targetParts, ...pending];
				continue;
			}
			if (st.type !== "dir" && pending.length > 0) {
				// Not a directory, yet more components follow: the path cannot exist. Keep going
				// literally so containment decides first (no error here may reveal what is outside).
				exists = false;
			}
			current = next;
		}
		return { canonical: current, exists: false };
	}

	private loop(abs: string): KeelError {
		return new KeelError("PATH_LOOP", `${abs} has a symbolic link loop; point it at a real file.`, {
			path: abs,
		});
	}
}
