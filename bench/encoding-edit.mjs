/**
 * The cost of an `edit` of one line in a ~2,000-line file in each encoding keel edits (median of
 * N calls): UTF-8 is the baseline; the others add detection (chardet, only when the bytes are not
 * UTF-8 and have no BOM) and a decode and encode of the whole file through iconv-lite.
 *
 * Run after `npm run build`: node bench/encoding-edit.mjs [N=20]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import iconv from "iconv-lite";

const N = Number(process.argv[2] ?? 20);
const { createSession } = await import(new URL("../dist/index.js", import.meta.url).href);

const LINES = {
	"utf-8": (k) => `Zeile ${k}: Größe über alles, naïve café`,
	"utf-16le": (k) => `Zeile ${k}: Größe über alles, naïve café`,
	"windows-1252": (k) => `Zeile ${k}: Größe über alles, naïve café`,
	Shift_JIS: (k) => `${k}行目：日本語のテキストです。`,
	"EUC-JP": (k) => `${k}行目：日本語のテキストです。`,
	GB18030: (k) => `第${k}行：这是中文文本。`,
	"EUC-KR": (k) => `${k}번째 줄: 한국어 텍스트입니다.`,
	Big5: (k) => `第${k}行：這是繁體中文文本。`,
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

console.log(`edit of one line in a 2,000-line file, median of ${N} (ms)`);
console.log("| encoding | bytes | edit |");
console.log("|---|---|---|");
for (const [encoding, line] of Object.entries(LINES)) {
	const root = mkdtempSync(join(tmpdir(), "keel-enc-bench-"));
	const text = `${Array.from({ length: 2000 }, (_, k) => line(k)).join("\n")}\n`;
	const bom = encoding === "utf-16le" ? Buffer.from([0xff, 0xfe]) : Buffer.alloc(0);
	const bytes = Buffer.concat([bom, iconv.encode(text, encoding)]);
	writeFileSync(join(root, "f.txt"), bytes);
	const s = await createSession({ root });
	const times = [];
	let cur = line(1000);
	for (let k = 0; k < N + 2; k++) {
		const next = `${line(1000)} ${k}`;
		const t = performance.now();
		const r = await s.call("edit", { path: "f.txt", edits: [{ oldText: cur, newText: next }] });
		if (!r.ok) throw new Error(`${encoding}: ${r.error.message}`);
		if (k >= 2) times.push(performance.now() - t);
		cur = next;
	}
	await s.close();
	rmSync(root, { recursive: true, force: true });
	console.log(`| ${encoding} | ${bytes.length} | ${median(times).toFixed(2)} |`);
}
