/**
 * The streamed read's SIMD line count (src/backend/chunk-arena.ts) against Buffer indexOf, on
 * every alignment and length class it treats apart: the 16-byte blocks, the 255-block rounds that
 * keep a byte lane from overflowing (a run of "\n" longer than 4080 bytes), and the 0..15-byte tail.
 */
import { describe, expect, it } from "vitest";
import { createChunkArena } from "../../src/backend/chunk-arena.js";
import { countNewlinesByIndexOf } from "../../src/backend/line-window.js";

const arena = createChunkArena();

/** Deterministic pseudo-random bytes (xorshift), with "\n" at about `density`. */
function fill(buf: Buffer, density: number, seed: number): void {
	let x = seed >>> 0 || 1;
	for (let i = 0; i < buf.length; i++) {
		x ^= x << 13;
		x ^= x >>> 17;
		x ^= x << 5;
		const r = (x >>> 0) / 2 ** 32;
		buf[i] = r < density ? 10 : (x >>> 8) & 0xff || 1;
	}
}

describe.skipIf(!arena)("SIMD newline count", () => {
	if (!arena) return;
	const [a, b] = arena.buffers;

	it("the two buffers are 1 MiB each and do not overlap", () => {
		expect(a.length).toBe(1024 * 1024);
		expect(b.length).toBe(1024 * 1024);
		a.fill(1);
		b.fill(10);
		expect(arena.countNewlines(a, 0)).toBe(0);
		expect(arena.countNewlines(b, 0)).toBe(b.length);
	});

	it("matches indexOf on every start offset and length class", () => {
		for (const [density, seed] of [
			[0.01, 1],
			[0.5, 2],
			[0.99, 3],
		] as const) {
			fill(a, density, seed);
			for (let from = 0; from < 40; from++) {
				for (const len of [0, 1, 15, 16, 17, 31, 33, 4079, 4080, 4081, 4096, 8161, 65_536 + 7]) {
					const view = a.subarray(0, from + len);
					expect(arena.countNewlines(view, from), `from ${from} len ${len}`).toBe(
						countNewlinesByIndexOf(view, from),
					);
				}
			}
		}
	});

	it("a whole chunk of nothing but newlines, in views that start mid-buffer", () => {
		b.fill(10);
		expect(arena.countNewlines(b, 0)).toBe(b.length);
		const view = b.subarray(12_345, b.length - 77);
		expect(arena.countNewlines(view, 3)).toBe(view.length - 3);
		expect(arena.countNewlines(view, view.length)).toBe(0);
	});

	it("refuses a buffer that is not its own (it would count the wrong bytes)", () => {
		expect(() => arena.countNewlines(Buffer.from("a\nb\n"), 0)).toThrow(/not a view of this arena/);
	});
});
