/**
 * keel's structural SDK types against the SDKs' own published types (devDependencies pinned in
 * package.json): `npm run typecheck` fails when a real SDK object no longer fits what keel uses.
 * The runtime assertions only check that nothing here imported the SDKs' code. Modal (`modal`
 * 0.11.1) is not among them: its cbor-x dependency's platform packages are missing from the
 * registry here, which leaves a package-lock that `npm ci` refuses; modal.ts was written from
 * 0.11.1's index.d.ts (Sandbox.exec, ContainerProcess) read in a scratch install.
 */

import { readFile } from "node:fs/promises";
import type { Sandbox as DaytonaSdkSandbox } from "@daytonaio/sdk";
import type { Sandbox as VercelSdkSandbox } from "@vercel/sandbox";
import type { Sandbox as E2bSdkSandbox } from "e2b";
import { expect, it } from "vitest";
import type { DaytonaSandbox } from "../../src/backend/container/daytona.js";
import type { E2bSandbox } from "../../src/backend/container/e2b.js";
import type { VercelSandbox } from "../../src/backend/container/vercel-sandbox.js";

type Fits<Real, Keel> = Real extends Keel ? true : false;
const fits: [
	Fits<E2bSdkSandbox, E2bSandbox>,
	Fits<VercelSdkSandbox, VercelSandbox>,
	Fits<DaytonaSdkSandbox, DaytonaSandbox>,
] = [true, true, true];

it("the SDKs' Sandbox types fit keel's (checked by tsc); the modules load without the SDKs", async () => {
	expect(fits).toEqual([true, true, true]);
	const mods = await Promise.all([
		import("../../src/backend/container/e2b.js"),
		import("../../src/backend/container/vercel-sandbox.js"),
		import("../../src/backend/container/daytona.js"),
		import("../../src/backend/container/modal.js"),
	]);
	for (const mod of mods) expect(Object.keys(mod).some((k) => k.startsWith("create"))).toBe(true);
	// Nothing but types comes from the SDKs: a plain install of keel (no SDK) loads these modules.
	for (const m of ["e2b", "vercel-sandbox", "daytona", "modal", "sdk-backend", "sdk-process", "sdk-lines"]) {
		const text = await readFile(new URL(`../../src/backend/container/${m}.ts`, import.meta.url), "utf8");
		expect(text).not.toMatch(/^import (?!type )[^;]*from "(e2b|@vercel\/sandbox|@daytonaio\/sdk|modal)"/m);
		expect(text).not.toMatch(/import\(\s*"(e2b|@vercel\/sandbox|@daytonaio\/sdk|modal)"/);
	}
});
