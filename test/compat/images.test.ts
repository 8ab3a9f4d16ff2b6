/**
 * Images read are bounded as pi bounds them (at most 2000x2000 and 4.5 MB of base64, a note
 * of the original size), never sent at full size; a small image passes byte for byte; an image too
 * large to decode safely, or undecodable, is omitted with a note instead of crashing or bloating.
 */
import { writeFile } from "node:fs/promises";
import * as pi from "@mariozechner/pi-coding-agent";
import photon from "@silvia-odwyer/photon-node";
import { imageSize } from "image-size";
import { beforeAll, describe, expect, it } from "vitest";
import { IMAGE_BOUNDS } from "../../src/boundary/image-bound.js";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

let session: Session;
const ws = useWorkspace({ prefix: "keel-images-", shared: true });
beforeAll(async () => {
	session = ws().session;
});

/** A PNG of seeded noise (incompressible, so it is large on disk). */
function noisePng(width: number, height: number, seed = 1): Buffer {
	const px = new Uint8Array(width * height * 4);
	let x = seed;
	for (let i = 0; i < px.length; i++) {
		x = (x * 1103515245 + 12345) >>> 0;
		px[i] = i % 4 === 3 ? 255 : x >>> 24;
	}
	const img = new photon.PhotonImage(px, width, height);
	try {
		return Buffer.from(img.get_bytes());
	} finally {
		img.free();
	}
}

type Part = { type: string; text?: string; data?: string; mimeType?: string };

async function readImage(path: string) {
	const r = await session.call("read", { path });
	if (!r.ok) throw new Error(JSON.stringify(r.error));
	const parts = r.content as Part[];
	return { note: parts[0].text ?? "", image: parts.find((p) => p.type === "image"), details: r.details };
}

describe("read: bounded images", () => {
	it("a small image passes through byte for byte, with no note", async () => {
		const png = noisePng(64, 48);
		await writeFile(ws().path("small.png"), png);
		const { note, image, details } = await readImage("small.png");
		expect(note).toBe("Read image file [image/png]");
		expect(image?.data).toBe(png.toString("base64"));
		expect(details).toBeUndefined();
	});

	it("a 12 MB PNG is scaled under the caps, with the original size noted, as pi does", async () => {
		const png = noisePng(2600, 1300, 7);
		expect(png.length).toBeGreaterThan(12 * 1024 * 1024);
		await writeFile(ws().path("big.png"), png);
		const { note, image } = await readImage("big.png");
		expect(image).toBeDefined();
		expect(image?.data?.length).toBeLessThanOrEqual(IMAGE_BOUNDS.maxBase64);
		const shown = imageSize(Buffer.from(image?.data ?? "", "base64"));
		expect(shown.width).toBeLessThanOrEqual(2000);
		expect(shown.height).toBeLessThanOrEqual(2000);
		expect(note).toContain("original 2600x1300");
		expect(note).toContain(`shown at ${shown.width}x${shown.height}`);
		const piRead = pi.createReadToolDefinition(ws().root);
		const piResult = await piRead.execute("t", { path: "big.png" }, undefined, undefined, undefined as never);
		const piImage = (piResult.content as Part[]).find((p) => p.type === "image");
		const piShown = imageSize(Buffer.from(piImage?.data ?? "", "base64"));
		expect({ w: shown.width, h: shown.height, type: image?.mimeType }).toEqual({
			w: piShown.width,
			h: piShown.height,
			type: piImage?.mimeType,
		});
	}, 120_000);

	it("a header claiming a huge image is omitted without being decoded", async () => {
		const png = noisePng(8, 8);
		// IHDR width and height live at bytes 16..24: claim 100000 x 100000 (10^10 pixels).
		png.writeUInt32BE(100_000, 16);
		png.writeUInt32BE(100_000, 20);
		await writeFile(ws().path("bomb.png"), png);
		const { note, image } = await readImage("bomb.png");
		expect(image).toBeUndefined();
		expect(note).toContain("Image omitted");
		expect(note).toContain("100000x100000");
	});

	it("an oversized image that cannot be decoded is omitted, not sent", async () => {
		const png = noisePng(8, 8);
		png.writeUInt32BE(3000, 16);
		png.writeUInt32BE(3000, 20);
		await writeFile(ws().path("broken.png"), png);
		const { note, image } = await readImage("broken.png");
		expect(image).toBeUndefined();
		expect(note).toContain("could not be decoded");
	});
});
