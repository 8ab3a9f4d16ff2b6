/** pi's ExtensionAPI must fit keel's PiExtensionHost, so `keel(pi)` compiles against either. */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import keel, { type PiExtensionHost } from "../../src/adapters/pi/extension.js";

describe("PiExtensionHost", () => {
	it("accepts pi's own ExtensionAPI (checked by tsc)", () => {
		const use = (api: ExtensionAPI): PiExtensionHost => api;
		expect(typeof use).toBe("function");
		expect(typeof keel).toBe("function");
	});
});
