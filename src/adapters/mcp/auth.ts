/**
 * The HTTP server's door: a bearer token every request must carry.
 *
 * The token comes from `--token-file FILE`, else the KEEL_MCP_TOKEN environment variable, else it is
 * generated at start and written to a file only the user can read, in $XDG_RUNTIME_DIR/keel or
 * ~/.config/keel. That directory and file are created without following a planted link: the
 * directory is checked with lstat (a real directory, owned by this user, no group or other access),
 * and the file is opened with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600. Comparison is constant-time
 * (SHA-256 of both sides, so their lengths never show either).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, open, readFile, unlink } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { homedir } from "node:os";
import { join } from "node:path";

export const TOKEN_ENV = "KEEL_MCP_TOKEN";
/** Shorter tokens are refused: a guessable token is no door. */
export const MIN_TOKEN_CHARS = 16;

export interface TokenSource {
	token: string;
	/** Where it came from, for the startup line. */
	origin: "file" | "env" | "generated";
	/** --token-file, or the generated token's file. */
	file?: string;
}

export class TokenError extends Error {}

function checked(token: string, where: string): string {
	const t = token.trim();
	if (t.length < MIN_TOKEN_CHARS)
		throw new TokenError(`the token in ${where} is shorter than ${MIN_TOKEN_CHARS} characters`);
	if (/\s/.test(t)) throw new TokenError(`the token in ${where} contains whitespace`);
	return t;
}

/** --token-file, then $KEEL_MCP_TOKEN; undefined when neither is set (the caller generates one). */
export async function givenToken(
	tokenFile: string | undefined,
	env: NodeJS.ProcessEnv = process.env,
): Promise<TokenSource | undefined> {
	if (tokenFile !== undefined) {
		let text: string;
		try {
			text = await readFile(tokenFile, "utf8");
		} catch (e) {
			throw new TokenError(`cannot read --token-file ${tokenFile}: ${(e as Error).message}`);
		}
		return { token: checked(text, tokenFile), origin: "file", file: tokenFile };
	}
	const fromEnv = env[TOKEN_ENV];
	if (fromEnv !== undefined && fromEnv !== "")
		return { token: checked(fromEnv, `$${TOKEN_ENV}`), origin: "env" };
	return undefined;
}

export function generateToken(): string {
	return randomBytes(32).toString("base64url");
}

/** $XDG_RUNTIME_DIR/keel when that is set (a per-user tmpfs), else ~/.config/keel. */
export function tokenDirectory(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
	const runtime = env.XDG_RUNTIME_DIR;
	return runtime?.startsWith("/") ? join(runtime, "keel") : join(home, ".config", "keel");
}

/** A directory of this user's with no group or other access; refuses a link or anyone else's. */
async function privateDirectory(dir: string): Promise<void> {
	await mkdir(dir, { recursive: true, mode: 0o700 });
	const st = await lstat(dir);
	const uid = process.getuid?.();
	if (st.isSymbolicLink())
		throw new TokenError(`${dir} is a symbolic link; refusing to write the token there`);
	if (!st.isDirectory()) throw new TokenError(`${dir} is not a directory`);
	if (uid !== undefined && st.uid !== uid) throw new TokenError(`${dir} is not owned by this user`);
	if ((st.mode & 0o077) !== 0)
		throw new TokenError(`${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)})`);
}

/**
 * Writes `token` to DIR/mcp-http-PORT.token (mode 0600) and returns the path. A stale file of the
 * same name (an earlier server on this port) is unlinked first; unlink removes a planted link
 * itself, never its target, and O_EXCL|O_NOFOLLOW refuses one planted in between.
 */
export async function writeTokenFile(token: string, port: number, dir = tokenDirectory()): Promise<string> {
	await privateDirectory(dir);
	const path = join(dir, `mcp-http-${port}.token`);
	await unlink(path).catch((e: NodeJS.ErrnoException) => {
		if (e.code !== "ENOENT") throw e;
	});
	const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
	const fh = await open(path, flags, 0o600);
	try {
		await fh.writeFile(`${token}\n`);
	} finally {
		await fh.close();
	}
	return path;
}

/** Checks `Authorization: Bearer TOKEN` in constant time. */
export class BearerCheck {
	private readonly digest: Buffer;
	constructor(token: string) {
		this.digest = createHash("sha256").update(token).digest();
	}

	accepts(req: IncomingMessage): boolean {
		const header = req.headers.authorization;
		const m = typeof header === "string" ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
		// Hash even when the header is missing, so a missing header costs what a wrong one does.
		const given = createHash("sha256")
			.update(m ? m[1] : "")
			.digest();
		return timingSafeEqual(given, this.digest) && m !== null;
	}
}
