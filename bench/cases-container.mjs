/**
 * Containers: keel's container backend (podman://, persistent shells over one `podman exec -i`
 * each) against one `podman exec` per operation, the way a transport without a long-lived shell
 * works. Both sides run in the same podman container (KEEL_TEST_PODMAN, as the tests; CI's
 * .ci/podman-setup makes one) on the same files (the host's /tmp is bound at /tmp).
 *
 * keel goes through `Session.call` on a podman backend: path checks, identity, hashes and the
 * durable commit each cost one round trip through an open shell. The peer is given its cheapest
 * form: read = `podman exec NAME cat file`; edit = that read, the replacement in JS, then
 * `podman exec -i NAME sh -c 'cat > file'` with the new bytes on stdin; bash = `podman exec NAME
 * sh -c 'cd dir && cmd'`.
 *
 * Run alone: `npm run build && KEEL_TEST_PODMAN=NAME node bench/cases-container.mjs [--quick]`.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createContainerBackend, engineTarget } from "../dist/backend/container/index.js";
import { createSession } from "../dist/index.js";
import { assert, runAreaStandalone, smallText, spawnOutput, textOf, toggler } from "./lib.mjs";

export const area = "container";
export const title = "podman container: keel's podman backend vs one `podman exec` per operation";
export const candidate = "keel";
export const baseline = "podman exec per call";

/** One podman exec: resolves with stdout, rejects on a non-zero exit. */
function podmanExec(name, argv, stdin) {
	return spawnOutput("podman", ["exec", ...(stdin ? ["-i"] : []), name, ...argv], stdin, "podman exec");
}

export async function setup({ dir }) {
	const name = process.env.KEEL_TEST_PODMAN;
	if (!name)
		throw new Error("set KEEL_TEST_PODMAN to a running podman container with the host's /tmp at /tmp");
	const root = join(dir, "work");
	mkdirSync(root, { recursive: true });
	const small = smallText();
	const files = { read: "read-small.txt", editKeel: "edit-keel.txt", editPeer: "edit-peer.txt" };
	for (const f of Object.values(files)) writeFileSync(join(root, f), small);

	const backend = createContainerBackend(engineTarget({ engine: "podman", container: name }));
	await backend.connect();
	const session = await createSession({ root, backend, spillDir: join(dir, "spill") });
	const keel = async (tool, args) => {
		const r = await session.call(tool, args);
		if (!r.ok) throw new Error(`keel ${tool} failed: ${r.error.code}: ${r.error.message}`);
		return r;
	};
	const keelEdit = toggler();
	const peerEditNext = toggler();
	const peerRead = (f) => podmanExec(name, ["cat", join(root, f)]);
	const peerEdit = async () => {
		const { oldText, newText } = peerEditNext();
		const text = (await peerRead(files.editPeer)).toString("utf8");
		assert(text.split(oldText).length === 2, "peer edit: the anchor must occur once");
		await podmanExec(
			name,
			["sh", "-c", 'cat > "$1"', "sh", join(root, files.editPeer)],
			text.replace(oldText, newText),
		);
	};
	const cases = [
		{
			name: "read, small file (2 KB)",
			iterations: 40,
			warmup: 3,
			async check() {
				const k = textOf(await keel("read", { path: files.read }));
				const p = (await peerRead(files.read)).toString("utf8");
				assert(k === p.replace(/\n$/, ""), "read: keel and podman exec cat differ");
			},
			contenders: [
				{ label: "keel", run: () => keel("read", { path: files.read }) },
				{ label: "podman exec per call", run: () => peerRead(files.read) },
			],
		},
		{
			name: "edit, one change in the small file",
			iterations: 40,
			warmup: 3,
			contenders: [
				{ label: "keel", run: () => keel("edit", { path: files.editKeel, edits: [keelEdit()] }) },
				{ label: "podman exec per call", run: peerEdit },
			],
			after() {
				for (const f of [files.editKeel, files.editPeer]) {
					assert(readFileSync(join(root, f), "utf8").length === small.length, `${f}: size drifted`);
				}
			},
		},
		{
			name: "bash, `echo hello`",
			iterations: 40,
			warmup: 3,
			async check() {
				assert(textOf(await keel("bash", { command: "echo hello" })).trim() === "hello", "keel bash");
			},
			contenders: [
				{ label: "keel", run: () => keel("bash", { command: "echo hello" }) },
				{
					label: "podman exec per call",
					run: () => podmanExec(name, ["sh", "-c", `cd '${root}' && echo hello`]),
				},
			],
		},
	];
	return {
		cases,
		async teardown() {
			await session.close();
		},
	};
}

// Standalone: node bench/cases-container.mjs [--quick]
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	await runAreaStandalone({ area, title, candidate, baseline, setup });
}
