/**
 * The scaling bench's charts (bench/scaling-plot.mjs) render: a real vega-lite → SVG → resvg → PNG
 * run on a tiny synthetic data set, checked from the PNG's own header, so the bench's plotting
 * cannot rot silently between bench runs. No timing is asserted.
 */
import { describe, expect, it } from "vitest";
import { renderChart } from "../../bench/scaling-plot.mjs";

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width, height, bit depth and colour type from the IHDR chunk, which a PNG must start with. */
function pngHeader(png: Buffer) {
	expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
	expect(png.readUInt32BE(8)).toBe(13);
	expect(png.subarray(12, 16).toString("latin1")).toBe("IHDR");
	return { width: png.readUInt32BE(16), height: png.readUInt32BE(20), depth: png[24], colourType: png[25] };
}

/** Chunk types in file order (walks the length-prefixed chunks to IEND; throws on truncation). */
function chunkTypes(png: Buffer): string[] {
	const types: string[] = [];
	for (let at = 8; at < png.length; ) {
		const length = png.readUInt32BE(at);
		types.push(png.subarray(at + 4, at + 8).toString("latin1"));
		at += 12 + length;
		if (at > png.length) throw new Error("truncated PNG chunk");
	}
	return types;
}

const sizes = [1e3, 1e5, 1e7];
const points = ["keel", "pi", "floor"].flatMap((contender, k) =>
	sizes.map((x) => ({ x, y: (k + 1) * (1 + x / 1e5), contender })),
);
const chart = { title: "read: median time", xTitle: "file size (bytes)", yTitle: "median ms", points };

describe("bench scaling charts", () => {
	it("renders a complete PNG of the requested size times the scale", async () => {
		const { png, width, height } = await renderChart(chart, { width: 320, height: 200, scale: 2 });
		expect({ width, height }).toEqual({ width: 640, height: 400 });
		const header = pngHeader(png);
		expect(header.width).toBe(640);
		expect(header.height).toBe(400);
		expect(header.depth).toBe(8);
		const types = chunkTypes(png);
		expect(types[0]).toBe("IHDR");
		expect(types).toContain("IDAT");
		expect(types[types.length - 1]).toBe("IEND");
	});

	it("another size gives another header (the size is not fixed somewhere)", async () => {
		const { png } = await renderChart(chart, { width: 500, height: 260, scale: 1 });
		const header = pngHeader(png);
		expect([header.width, header.height]).toEqual([500, 260]);
	});

	it("draws one line per contender on log axes, with the title and legend", async () => {
		const { svg } = await renderChart(chart, { width: 320, height: 200, scale: 1 });
		for (const label of ["keel", "pi", "floor", "read: median time", "file size (bytes)"])
			expect(svg).toContain(`>${label}<`);
		// One stroke per contender's line, in its own colour.
		for (const colour of ["#1f77b4", "#ff7f0e", "#7f7f7f"]) expect(svg).toContain(`stroke="${colour}"`);
		// A log x axis over 1e3..1e7 labels the decades (a linear one would not show 1k and 100k).
		for (const tick of ["1k", "10k", "100k", "1M", "10M"]) expect(svg).toContain(`>${tick}<`);
	});
});
