/** The framing and the end-marker split, without a Python process. */
import { describe, expect, it } from "vitest";
import { EndMarkerSplitter } from "../../src/python/end-marker.js";
import { encodeFrame, FrameDecoder, ProtocolError } from "../../src/python/frames.js";

describe("FrameDecoder", () => {
	it("decodes frames split at every byte and several frames in one chunk", () => {
		const bytes = Buffer.concat([encodeFrame({ id: 1, a: "é" }), encodeFrame({ id: 2 })]);
		const one = new FrameDecoder(1024);
		const got = [];
		for (const b of bytes) got.push(...one.push(Buffer.from([b])));
		expect(got).toEqual([{ id: 1, a: "é" }, { id: 2 }]);
		expect(new FrameDecoder(1024).push(bytes)).toEqual([{ id: 1, a: "é" }, { id: 2 }]);
	});

	it("refuses an oversized length, non-JSON and a frame without a numeric id", () => {
		expect(() => new FrameDecoder(16).push(Buffer.from([0xff, 0xff, 0xff, 0xff]))).toThrow(ProtocolError);
		const garbage = Buffer.concat([Buffer.from([0, 0, 0, 5]), Buffer.from("hello")]);
		expect(() => new FrameDecoder(16).push(garbage)).toThrow(/not JSON/);
		const noId = Buffer.concat([Buffer.from([0, 0, 0, 2]), Buffer.from("[]")]);
		expect(() => new FrameDecoder(16).push(noId)).toThrow(/numeric id/);
	});
});

describe("EndMarkerSplitter", () => {
	const marker = Buffer.from("\u0000END-123\u0000", "latin1");

	function run(chunks: string[]) {
		const out: string[] = [];
		const s = new EndMarkerSplitter(
			(c) => out.push(c.toString("latin1")),
			() => out.push("<M>"),
		);
		s.expect(marker);
		for (const c of chunks) s.push(Buffer.from(c, "latin1"));
		s.flush();
		return out.join("");
	}

	it("finds the marker across chunk boundaries and passes later bytes on", () => {
		const whole = `hello\u0000END-123\u0000after`;
		for (let cut = 0; cut <= whole.length; cut++) {
			expect(run([whole.slice(0, cut), whole.slice(cut)])).toBe("hello<M>after");
		}
		expect(run([...whole])).toBe("hello<M>after");
	});

	it("passes on a partial marker that turns out not to be one", () => {
		expect(run(["abc\u0000END-12", "4 rest"])).toBe("abc\u0000END-124 rest");
	});
});
