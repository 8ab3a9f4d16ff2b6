/**
 * The container backend against a real podman container (test/fixtures/podman.ts): one long-lived
 * shell per session, a shell killed under a running command, protocol-looking bytes, concurrency,
 * the container boundary, a missing container. The contract suite and the python battery run on
 * it too (test/contract/backends.ts, test/python/backends.test.ts).
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseBackend } from "../../src/adapters/backend-spec.js";
import { type ContainerBackend, createContainerBackend } from "../../src/backend/container/index.js";
import { KeelError } from "../../src/boundary/errors.js";
import { Session } from "../../src/session.js";
import { podmanContainer, podmanMissing } from "../fixtures/podman.js";
import { processesWith, waitFor } from "../fixtures/processes.js";

const why = podmanMissing();
if (why) console.warn(`container backend tests skipped: ${why}`);

/** A backend whose exec clients carry `tag` on their command line (found with pgrep). */
function tagged(tag: string, maxShells?: number): ContainerBackend {
	const name = podmanContainer();
	return createContainerBackend(
		{
			kind: "podman",
			prefix: ["podman", "exec", "-i", "-e", `KEEL_T=${tag}`, "--", name],
			label: `podman container ${name}`,
		},
		{ maxShells },
	);
}

const newTag = () => `keel-ct-${randomBytes(5).toString("hex")}`;
const pidOf = (line: string) => Number(line.trim().split(/\s+/)[0]);
const collect = () => {
	const chunks: Buffer[] = [];
	return { onData: (c: Buffer) => chunks.push(c), text: () => Buffer.concat(chunks).toString("utf8") };
};

describe.skipIf(why !== undefined)("container backend (podman)", { timeout: 60_000 }, () => {
	let dir: string;
	beforeAll(async () => {
		dir = await realpath(await mkdtemp(join(tmpdir(), "keel-container-")));
	});
	afterAll(async () => {
		await rm(dir, { recursive: true, force: true });
	});

	it("one long-lived shell serves every sequential operation: no exec client per call", async () => {
		const tag = newTag();
		const b = tagged(tag);
		try {
			await b.connect();
			const file = join(dir, `seq-${tag}.txt`);
			for (let i = 0; i < 10; i++) {
				await b.fs.writeFile(file, Buffer.from(`round ${i}\n`));
				expect((await b.fs.readFile(file)).toString()).toBe(`round ${i}\n`);
				const out = collect();
				const r = await b.exec.run({ command: `echo n=${i}; exit ${i}`, cwd: dir, onData: out.onData });
				expect(r.exitCode).toBe(i);
				expect(out.text()).toBe(`n=${i}\n`);
			}
			expect(b.shellsOpened).toBe(1);
			expect(processesWith(`KEEL_T=${tag}`)).toHaveLength(1);
			// Search probes rg and fd at once (two shells); later searches reuse them.
			for (let i = 0; i < 3; i++) {
				const g = await b.search.grep({ pattern: "round 9", path: dir, context: 0, limit: 5 });
				expect(g.matches.map((m) => m.path)).toEqual([file]);
			}
			expect(b.shellsOpened).toBeLessThanOrEqual(2);
			expect(processesWith(`KEEL_T=${tag}`)).toHaveLength(b.shellsOpened);
		} finally {
			await b.close();
		}
		expect(await waitFor(() => processesWith(`KEEL_T=${tag}`).length === 0, 5000)).toBe(true);
	});

	it("a shell killed under a running command: the call fails BACKEND_UNAVAILABLE, the command is killed inside, the next call reconnects", async () => {
		const tag = newTag();
		const b = tagged(tag);
		const marker = `keel-orphan-${tag}`;
		try {
			await b.connect();
			const running = b.exec.run({
				command: `(exec -a ${marker} sleep 301) & exec -a ${marker} sleep 300`,
				cwd: dir,
				onData() {},
			});
			expect(await waitFor(() => processesWith(marker).length === 2, 10_000)).toBe(true);
			const clients = processesWith(`KEEL_T=${tag}`);
			expect(clients).toHaveLength(1);
			process.kill(pidOf(clients[0]), "SIGKILL");
			const err = await running.then(
				() => undefined,
				(e: unknown) => e,
			);
			expect(err).toBeInstanceOf(KeelError);
			expect((err as KeelError).code).toBe("BACKEND_UNAVAILABLE");
			expect((err as KeelError).message).toContain("may or may not have taken effect");
			// Both processes of the group are gone from the container (killed through a new helper).
			expect(await waitFor(() => processesWith(marker).length === 0, 10_000)).toBe(true);
			const out = collect();
			expect((await b.exec.run({ command: "echo back", cwd: dir, onData: out.onData })).exitCode).toBe(0);
			expect(out.text()).toBe("back\n");
			expect(b.shellsOpened).toBe(3); // the dead shell, the helper, the new shell
		} finally {
			await b.close();
		}
	});

	it("bytes that look like keel's framing pass through stdin and stdout unchanged", async () => {
		const b = tagged(newTag());
		try {
			const hex = randomBytes(16).toString("hex");
			const tricky = Buffer.concat([
				Buffer.from(`KEEL_${hex}_END\n\x1f${hex} d\n\x1f${hex} e\nAAAA====\n'EOF'\n\r\n`),
				Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
				Buffer.from("\nKEEL_"),
			]);
			const file = join(dir, `tricky-${hex}.bin`);
			await b.fs.writeFile(file, tricky);
			expect((await readFile(file)).equals(tricky)).toBe(true);
			expect((await b.fs.readFile(file)).equals(tricky)).toBe(true);
			const out = collect();
			await b.exec.run({
				command: `cat -- '${file}'; printf '\\037%s d\\n' ${hex}`,
				cwd: dir,
				onData: out.onData,
			});
			expect(out.text()).toContain(`\x1f${hex} d\n`);
			expect(out.text().length).toBeGreaterThan(tricky.length - 200); // decoded as UTF-8: lengths differ
		} finally {
			await b.close();
		}
	});

	it("concurrent calls beyond maxShells wait for a shell and all finish right", async () => {
		const b = tagged(newTag(), 2);
		try {
			const outs = Array.from({ length: 5 }, () => collect());
			const results = await Promise.all(
				outs.map((o, i) => b.exec.run({ command: `sleep 0.3; echo job ${i}`, cwd: dir, onData: o.onData })),
			);
			expect(results.map((r) => r.exitCode)).toEqual([0, 0, 0, 0, 0]);
			expect(outs.map((o) => o.text())).toEqual([0, 1, 2, 3, 4].map((i) => `job ${i}\n`));
			expect(b.shellsOpened).toBe(2);
		} finally {
			await b.close();
		}
	});

	it("the container boundary: a command's writes outside the bind land in the container, and keel's tools still refuse paths outside the root", async () => {
		const tag = newTag();
		const b = tagged(tag);
		const root = join(dir, `root-${tag}`);
		await mkdir(root);
		const session = await Session.create({ backend: b, root, spillDir: join(dir, "spill") });
		try {
			const outsideFile = `/etc/keel-outsideFile-${tag}`;
			const r = await session.call("bash", { command: `echo x > ${outsideFile} && cat ${outsideFile}` });
			expect(r.ok && JSON.stringify(r.content)).toContain("x");
			expect(existsSync(outsideFile)).toBe(false); // the container's /etc, not this machine's
			const w = await session.call("write", { path: `/etc/keel-tool-${tag}`, content: "no" });
			expect(w.ok).toBe(false);
			expect(!w.ok && w.error.code).toBe("PATH_OUTSIDE_ROOTS");
			const inside = await session.call("bash", { command: `test -e /etc/keel-tool-${tag}; echo $?` });
			expect(inside.ok && JSON.stringify(inside.content)).toContain("1");
			await b.exec.run({ command: `rm -f ${outsideFile}`, cwd: "/", onData() {} });
		} finally {
			await session.close();
			await b.close();
		}
	});

	it("a missing container is BACKEND_UNAVAILABLE naming it, from the library and the CLI spec", async () => {
		const name = `keel-no-such-${randomBytes(4).toString("hex")}`;
		const b = createContainerBackend({
			kind: "podman",
			prefix: ["podman", "exec", "-i", "--", name],
			label: `podman container ${name}`,
		});
		const err = await b.connect().then(
			() => undefined,
			(e: unknown) => e as KeelError,
		);
		expect(err?.code).toBe("BACKEND_UNAVAILABLE");
		expect(err?.message).toContain(name);
		expect(err?.message).toMatch(/no container|no such container/i);
		const choice = chooseBackend({ backend: `podman://${name}/work` });
		expect(choice.root).toBe("/work");
		await expect(choice.open?.("/work", [], [])).rejects.toMatchObject({ code: "BACKEND_UNAVAILABLE" });
		await b.close();
	});
});
