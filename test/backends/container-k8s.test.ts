/**
 * The k8s:// backend's argv and protocol layer. No cluster runs here: test/fixtures/fake-kubectl
 * stands in for kubectl, checks the argv keel builds (refusing anything else as kubectl would) and
 * runs `podman exec -i` in the CI's container instead. The contract suite runs on it too
 * ("k8s (fake kubectl → podman)" in test/contract/backends.ts). Spec parsing needs no container.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chooseBackend } from "../../src/adapters/backend-spec.js";
import { createContainerBackend, kubectlTarget } from "../../src/backend/container/index.js";
import { parseContainerSpec } from "../../src/backend/container/spec.js";
import { FAKE_KUBECTL, podmanContainer, podmanMissing } from "../fixtures/podman.js";
import { processesWith, waitFor } from "../fixtures/processes.js";

describe("container specs", () => {
	it("parse docker://, podman:// and k8s:// into the exec client's argv and a root", () => {
		expect(parseContainerSpec("podman://web_1/srv/app/")).toMatchObject({
			root: "/srv/app",
			target: { kind: "podman", prefix: ["podman", "exec", "-i", "--", "web_1"] },
		});
		expect(parseContainerSpec("docker://Web.2/work").target.prefix).toEqual([
			"docker",
			"exec",
			"-i",
			"--",
			"Web.2",
		]);
		expect(parseContainerSpec("k8s://prod/api-7f9/app/work")).toMatchObject({
			root: "/work",
			target: { kind: "k8s", prefix: ["kubectl", "exec", "-i", "-n", "prod", "api-7f9", "-c", "app", "--"] },
		});
		// An empty container segment: the pod's default container.
		expect(parseContainerSpec("k8s://prod/api-7f9//work")).toMatchObject({
			root: "/work",
			target: { prefix: ["kubectl", "exec", "-i", "-n", "prod", "api-7f9", "--"] },
		});
		expect(parseContainerSpec("podman://web").root).toBeUndefined();
	});

	it("refuse names that could be options or paths, and a missing directory, before running anything", () => {
		for (const bad of [
			"podman://-rm/work",
			"podman:///work",
			"docker://a b/work",
			"k8s://ns",
			"k8s://ns/-x/c/w",
			"k8s://ns/p/--all/w",
			"k8s://../p/w",
		]) {
			expect(() => parseContainerSpec(bad), bad).toThrow(/Invalid backend/);
		}
		expect(() => chooseBackend({ backend: "podman://web" })).toThrow(/needs the directory to work in/);
		expect(() => chooseBackend({ backend: "podman://-x/w" })).toThrow(/not a valid name/);
	});
});

const why = podmanMissing();
if (why) console.warn(`k8s (fake kubectl) tests skipped: ${why}`);

describe.skipIf(why !== undefined)("k8s backend over (fake) kubectl exec", { timeout: 60_000 }, () => {
	it("runs files, commands and aborts through one `kubectl exec -i -n NS POD -c C -- sh`", async () => {
		const dir = await realpath(await mkdtemp(join(tmpdir(), "keel-k8s-")));
		const log = join(dir, "kubectl.log");
		process.env.FAKE_KUBECTL_LOG = log;
		const pod = podmanContainer();
		const b = createContainerBackend(
			kubectlTarget({
				namespace: "keel",
				pod,
				container: "main",
				command: FAKE_KUBECTL,
				globalArgs: ["--context", "ci"],
			}),
		);
		try {
			await b.connect();
			const file = join(dir, "a.txt");
			await b.fs.writeFile(file, Buffer.from("via kubectl\n"));
			expect((await b.fs.readFile(file)).toString()).toBe("via kubectl\n");
			const marker = `keel-k8s-${randomBytes(4).toString("hex")}`;
			const ac = new AbortController();
			const running = b.exec.run({
				command: `exec -a ${marker} sleep 300`,
				cwd: dir,
				signal: ac.signal,
				onData() {},
			});
			expect(await waitFor(() => processesWith(marker).length === 1, 10_000)).toBe(true);
			ac.abort();
			expect((await running).aborted).toBe(true);
			expect(await waitFor(() => processesWith(marker).length === 0, 5000)).toBe(true);
			const calls = (await readFile(log, "utf8")).trim().split("\n");
			// Job shell, helper shell; every one the persistent sh, never a per-operation exec.
			expect(calls).toEqual(calls.map(() => `--context ci exec -i -n keel ${pod} -c main -- sh`));
			expect(calls.length).toBe(b.shellsOpened);
		} finally {
			await b.close();
			delete process.env.FAKE_KUBECTL_LOG;
			await rm(dir, { recursive: true, force: true });
		}
	});

	it("a pod that does not exist is BACKEND_UNAVAILABLE with kubectl's message", async () => {
		const b = createContainerBackend(
			kubectlTarget({ namespace: "keel", pod: "no-such-pod", command: FAKE_KUBECTL }),
		);
		await expect(b.connect()).rejects.toMatchObject({
			code: "BACKEND_UNAVAILABLE",
			message: expect.stringContaining('pods "no-such-pod" not found'),
		});
		await b.close();
	});
});
