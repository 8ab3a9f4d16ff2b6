/**
 * The line component pi draws: no line may be wider than the terminal (pi-tui aborts), so keel's
 * width estimate must never be below pi-tui's own measure; wrapping must lose no text.
 */
import { visibleWidth as piWidth } from "@mariozechner/pi-tui";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fitLine, LinesView, sanitize, visibleWidth } from "../../src/adapters/pi/view.js";

const color = (t: string) => `\x1b[38;5;114m${t}\x1b[39m`;
const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
const text = fc.oneof(
	fc.string({ unit: "binary", maxLength: 60 }),
	fc.string({ unit: "grapheme", maxLength: 40 }),
);

describe("pi view", () => {
	it("over-estimates pi-tui's width for any sanitized text", () => {
		fc.assert(
			fc.property(text, (raw) => {
				const s = color(sanitize(raw));
				expect(visibleWidth(s)).toBeGreaterThanOrEqual(piWidth(s));
			}),
			{ numRuns: 500 },
		);
	});

	it("never renders a line wider than the terminal, truncating or wrapping", () => {
		fc.assert(
			fc.property(text, fc.integer({ min: 1, max: 30 }), fc.boolean(), (raw, width, wrap) => {
				for (const piece of fitLine(color(sanitize(raw)), width, wrap)) {
					expect(piWidth(piece)).toBeLessThanOrEqual(width);
				}
			}),
			{ numRuns: 500 },
		);
	});

	it("wrapping keeps every character and carries the color over", () => {
		fc.assert(
			fc.property(text, fc.integer({ min: 2, max: 20 }), (raw, width) => {
				const clean = sanitize(raw);
				const pieces = fitLine(color(clean), width, true);
				expect(pieces.map(stripAnsi).join("")).toBe(clean);
				if (pieces.length > 1)
					for (const p of pieces.slice(1)) expect(p.startsWith("\x1b[38;5;114m")).toBe(true);
			}),
		);
	});

	it("sanitize removes escape sequences and control characters and expands tabs", () => {
		expect(sanitize("a\x1b[2Jb\tc\rd\x07")).toBe("a[2Jb    cd");
	});

	it("truncates with an ellipsis and caches per width", () => {
		const view = new LinesView().set(["abcdefghij", "xy"]);
		expect(view.render(5)).toEqual(["abcd…\x1b[0m", "xy"]);
		expect(view.render(5)).toBe(view.render(5));
		expect(new LinesView().set(["abcdefghij"], true).render(4).map(stripAnsi)).toEqual([
			"abcd",
			"efgh",
			"ij",
		]);
	});
});
