/**
 * The one reader of a read-as-opened reply (src/backend/remote/read-current-reply.ts), used by the
 * exec backend and by ssh's file helper, given replies a broken or hostile host could send. Each
 * fails with a structured error (IO_ERROR naming the path and what was wrong, or the truncation
 * fact) and hands no bytes on; well-formed replies give back exactly their stat and bytes.
 */
import { describe, expect, it } from "vitest";
import { parseReadCurrentReply, READ_CURRENT_HEAD_MAX } from "../../src/backend/remote/read-current-reply.js";
import { KeelError } from "../../src/boundary/errors.js";

const PATH = "/root/f.txt";
/** A regular file's stat line (mode 100644) of the given size. */
const stat = (size: number) => `81a4 ${size} 2049 131 1700000000.123456789 1700000001.000000001`;
const reply = (...parts: (string | Buffer)[]) =>
	Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : p)));

function failure(bytes: Buffer, maxBytes?: number): KeelError {
	try {
		parseReadCurrentReply(bytes, PATH, maxBytes);
	} catch (e) {
		expect(e).toBeInstanceOf(KeelError);
		return e as KeelError;
	}
	throw new Error("the reply was accepted");
}

describe("a malformed read-as-opened reply is an IO_ERROR naming the path and the fault", () => {
	const long = "7".repeat(READ_CURRENT_HEAD_MAX + 40);
	const cases: [name: string, bytes: Buffer, maxBytes: number | undefined, why: string][] = [
		["empty", reply(""), undefined, "no header line"],
		["cut off inside the header", reply(`st ${stat(3)}`), undefined, "no header line"],
		["an over-long header, no newline", reply(`st ${long}`), undefined, "header too long"],
		[
			"an over-long header, then a newline",
			reply(`st 81a4 ${long} 1 2 3 4\nabc`),
			undefined,
			"header too long",
		],
		["an empty header line", reply("\nabc"), undefined, "unknown header"],
		["an unknown kind", reply(`ok ${stat(3)}\nabc`), undefined, "unknown header"],
		["a NUL in the kind", reply(`st\0${stat(3)}\nabc`), undefined, "unknown header"],
		["a NUL inside the stat line", reply(`st 81a4 3 20\x0049 131 1 1\nabc`), undefined, "not a stat line"],
		["an extra field", reply(`st ${stat(3)} 7\nabc`), undefined, "not a stat line"],
		["a missing field", reply("st 81a4 3 2049 131 1700000000\nabc"), undefined, "not a stat line"],
		["a doubled space", reply("st 81a4  3 2049 131 1 1\nabc"), undefined, "not a stat line"],
		["a size that is not a number", reply("st 81a4 3x 2049 131 1 1\nabc"), undefined, "not a stat line"],
		["a device in exponent form", reply("st 81a4 3 1e3 131 1 1\nabc"), undefined, "not a stat line"],
		["a mode too wide", reply("st 1000081a4 3 2049 131 1 1\nabc"), undefined, "not a stat line"],
		["a directory's stat", reply("st 41ed 3 2049 131 1 1\nabc"), undefined, "not a regular file's stat"],
		["a link's stat", reply("st a1ff 3 2049 131 1 1\nabc"), undefined, "not a regular file's stat"],
		["big on an unbounded read", reply(`big ${stat(30)}\n`), undefined, "big on an unbounded read"],
		["big for a file within the bound", reply(`big ${stat(3)}\n`), 10, "big within the bound"],
		["bytes after big", reply(`big ${stat(30)}\n`, "leak"), 10, "bytes after big"],
		["more bytes than the stat's size", reply(`st ${stat(3)}\n`, "abcd"), 10, "more bytes than the size"],
		["bytes past the bound", reply(`st ${stat(30)}\n`, "a".repeat(30)), 10, "read past the bound"],
		["short on an unbounded read", reply("short\n"), undefined, "short on an unbounded read"],
		["bytes after short", reply("short\n", "abc"), 10, "bytes after short"],
	];
	it.each(cases)("%s", (_, bytes, maxBytes, why) => {
		const e = failure(bytes, maxBytes);
		expect(e.code).toBe("IO_ERROR");
		expect(e.details).toEqual({ malformed: why, output: expect.any(String) });
		expect(e.path).toBe(PATH);
		expect(e.message).toContain(PATH);
		// The error quotes a bounded part of the header, escaped: never the body, never a raw NUL.
		expect(e.message.length).toBeLessThan(300);
		expect(e.message).not.toContain("\0");
		expect(e.message).not.toContain("leak");
	});
});

describe("a bounded reply with fewer bytes than its stat's size is the file changing while read", () => {
	it.each([
		["fewer bytes", reply(`st ${stat(10)}\n`, "abcd")],
		["the helper's short", reply("short\n")],
	])("%s", (_, bytes) => {
		const e = failure(bytes, 20);
		expect(e.code).toBe("CHANGED_ON_DISK");
		expect((e as { fact?: string }).fact).toBe("changed-while-reading");
	});
});

describe("a well-formed reply gives its stat and exactly its bytes", () => {
	it("unbounded: any body, newlines and NULs included", () => {
		const body = Buffer.from("line\n\0two\nst 81a4 1 1 1 1 1\n", "latin1");
		const r = parseReadCurrentReply(reply(`st ${stat(3)}\n`, body), PATH);
		expect(r.bytes).toEqual(body);
		expect(r.stat).toMatchObject({ type: "file", size: 3, mode: 0o644, dev: 2049n, ino: 131n });
		expect(r.stat.mtimeNs).toBe(1700000000123456789n);
	});

	it("bounded: exactly the size, or big alone for a larger file", () => {
		expect(parseReadCurrentReply(reply(`st ${stat(4)}\n`, "abcd"), PATH, 4).bytes).toEqual(
			Buffer.from("abcd"),
		);
		expect(parseReadCurrentReply(reply(`big ${stat(5)}\n`), PATH, 4)).toMatchObject({
			bytes: null,
			stat: { size: 5 },
		});
	});

	it("whole seconds and a time before 1970, as stat(1) without precision and Python print them", () => {
		const r = parseReadCurrentReply(reply("st 81a4 0 1 2 -2.500000000 1700000000\n"), PATH, 0);
		expect(r.stat.mtimeNs).toBe(-1_500_000_000n);
		expect(r.stat.ctimeNs).toBe(1_700_000_000_000_000_000n);
		expect(r.bytes).toEqual(Buffer.alloc(0));
	});
});
