/**
 * MCP roots: a client that declares the roots capability gets a keel session on its file:// roots
 * (the first is the workspace root; the server's --root is no longer reachable; --allow-read stays);
 * a client without roots, or with no usable file:// root, gets the server's roots. Over stdio (runServe
 * from the build) and over HTTP, where roots/list travels on the tool call's own response stream.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startHttp } from "../../src/adapters/mcp/http.js";
import {
	BUILT,
	type ClientOptions,
	call,
	connectHttp,
	connectStdio,
	expectCode,
	expectOk,
	makeDir,
	removeDir,
	TEST_TOKEN,
} from "./helpers.js";

interface Dirs {
	server: string;
	client: string;
	second: string;
	readOnly: string;
}

/** How the server is started: "client-roots" = --root ... --client-roots; "explicit" = --root only; "none" = no --root. */
type Mode = "client-roots" | "explicit" | "none";

type Open = (
	d: Dirs,
	client: ClientOptions,
	mode: Mode,
) => Promise<{
	client: import("@modelcontextprotocol/sdk/client/index.js").Client;
	log(): string;
	close(): Promise<void>;
}>;

function rootsSuite(transport: string, open: Open) {
	describe(`roots over ${transport}`, () => {
		let d: Dirs;
		let closeConn: (() => Promise<void>) | undefined;
		let log = () => "";
		const connect = async (opts: ClientOptions, mode: Mode = "client-roots") => {
			const c = await open(d, opts, mode);
			closeConn = c.close;
			log = c.log;
			return c.client;
		};
		beforeEach(async () => {
			d = {
				server: await makeDir("root-server", { "server-only.txt": "server secret\n" }),
				client: await makeDir("root-client", { "client.txt": "from the client root\n" }),
				second: await makeDir("root-second", { "second.txt": "second root\n" }),
				readOnly: await makeDir("root-ro", { "ref.txt": "reference\n" }),
			};
		});
		afterEach(async () => {
			await closeConn?.();
			closeConn = undefined;
			for (const dir of Object.values(d)) await removeDir(dir);
		});

		it("keeps an explicit --root over the client's roots, and logs the roots in force", async () => {
			const client = await connect({ roots: [d.client] }, "explicit");
			expect(expectOk(await call(client, "read", { path: "server-only.txt" }))).toContain("server secret");
			expectCode(await call(client, "read", { path: join(d.client, "client.txt") }), "PATH_OUTSIDE_ROOTS");
			expect(log()).toContain(
				`keel: session roots: workspace ${d.server}; read-only ${d.readOnly} (from the server's options`,
			);
			expect(log()).toContain("the client's roots are not used");
		});

		it("uses the client's roots when no --root was given", async () => {
			const client = await connect({ roots: [d.client] }, "none");
			expect(expectOk(await call(client, "read", { path: "client.txt" }))).toContain("from the client root");
			expect(log()).toContain(`keel: session roots: workspace ${d.client} (from the client's roots)`);
		});

		it("uses the client's roots instead of the server's --root with --client-roots", async () => {
			const client = await connect({ roots: [d.client, d.second] });
			// Relative paths resolve against the client's first root.
			expect(expectOk(await call(client, "read", { path: "client.txt" }))).toContain("from the client root");
			expect(expectOk(await call(client, "bash", { command: "pwd" }))).toContain(d.client);
			// The second root is writable too.
			expectOk(await call(client, "write", { path: join(d.second, "new.txt"), content: "ok\n" }));
			expect(await readFile(join(d.second, "new.txt"), "utf8")).toBe("ok\n");
			// The server's own root is out of reach.
			expectCode(
				await call(client, "read", { path: join(d.server, "server-only.txt") }),
				"PATH_OUTSIDE_ROOTS",
			);
			expectCode(await call(client, "read", { path: "server-only.txt" }), "NOT_FOUND");
			// --allow-read (given relative to the server's root) still applies, read-only.
			expect(expectOk(await call(client, "read", { path: join(d.readOnly, "ref.txt") }))).toContain(
				"reference",
			);
			expectCode(
				await call(client, "write", { path: join(d.readOnly, "ref.txt"), content: "x" }),
				"PATH_READ_ONLY",
			);
		});

		it("keeps the server's roots for a client without the roots capability", async () => {
			const client = await connect({});
			expect(expectOk(await call(client, "read", { path: "server-only.txt" }))).toContain("server secret");
			expectCode(await call(client, "read", { path: join(d.client, "client.txt") }), "PATH_OUTSIDE_ROOTS");
		});

		it("keeps the server's roots when the client offers no usable file:// root", async () => {
			const client = await connect({ rootUris: ["https://example.com/repo", "file:///does/not/exist"] });
			expect(expectOk(await call(client, "read", { path: "server-only.txt" }))).toContain("server secret");
		});

		it("asks for roots before the first of many parallel calls and uses them for all", async () => {
			const client = await connect({ roots: [d.client] });
			const results = await Promise.all(
				Array.from({ length: 16 }, () => call(client, "read", { path: "client.txt" })),
			);
			for (const r of results) expect(expectOk(r)).toContain("from the client root");
		});
	});
}

const readOnlyArg = (d: Dirs) => `../${d.readOnly.split("/").pop()}`;

function serverArgs(d: Dirs, mode: Mode): string[] {
	if (mode === "none") return [];
	const args = ["--root", d.server, "--allow-read", readOnlyArg(d)];
	return mode === "client-roots" ? [...args, "--client-roots"] : args;
}

describe.skipIf(!BUILT)("stdio", () => {
	rootsSuite("stdio", async (d, opts, mode) => {
		const conn = await connectStdio(serverArgs(d, mode), opts);
		return { client: conn.client, log: conn.stderr, close: conn.close };
	});
});

rootsSuite("HTTP", async (d, opts, mode) => {
	const lines: string[] = [];
	const server = await startHttp(mode === "none" ? {} : { root: d.server, allowRead: [readOnlyArg(d)] }, {
		port: 0,
		log: (l) => lines.push(l),
		token: TEST_TOKEN,
		clientRoots: mode === "client-roots" ? "always" : undefined,
	});
	const conn = await connectHttp(server.url, opts);
	return {
		client: conn.client,
		log: () => lines.join("\n"),
		async close() {
			await conn.close();
			await server.close();
		},
	};
});
