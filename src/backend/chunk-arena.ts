/**
 * The two chunk buffers of a streamed read (read-window.ts), in one WebAssembly memory, and a SIMD
 * count of "\n" over them. Counting the lines past the shown window was the largest cost of a
 * large read after the hash: a Buffer indexOf per line (about 30 ns a line, 3 ms on a 10 MB file
 * of 100-byte lines) where the SIMD loop takes about 0.05 ms a MiB. The chunks are read straight
 * into the memory, so nothing is copied for the count; the hash and the UTF-8 check read the same
 * bytes through Buffer views. One arena per backend, reused (a fresh memory per read would pay
 * its page faults every call); a read that finds it busy uses plain buffers and indexOf.
 *
 * The module is this text format, assembled with wabt's wat2wasm (SIMD enabled):
 *
 *   (module
 *     (memory (export "memory") 32 32)                ;; 2 MiB: two chunks, never grown
 *     (func (export "count") (param $p i32) (param $n i32) (result i32)
 *       (local $end i32) (local $stop i32) (local $count i32)
 *       (local $nl v128) (local $acc8 v128) (local $acc32 v128)
 *       (local.set $nl (i8x16.splat (i32.const 10)))
 *       (local.set $end (i32.add (local.get $p) (i32.and (local.get $n) (i32.const -16))))
 *       (block $done
 *         (loop $outer                                ;; at most 255 blocks of 16 bytes per round,
 *           (br_if $done (i32.ge_u (local.get $p) (local.get $end)))  ;; so no u8 lane overflows
 *           (local.set $stop (i32.add (local.get $p) (i32.const 4080)))
 *           (if (i32.gt_u (local.get $stop) (local.get $end)) (then (local.set $stop (local.get $end))))
 *           (local.set $acc8 (v128.const i64x2 0 0))
 *           (loop $inner                              ;; a match is -1 in its lane: subtract it
 *             (local.set $acc8 (i8x16.sub (local.get $acc8)
 *               (i8x16.eq (v128.load (local.get $p)) (local.get $nl))))
 *             (local.set $p (i32.add (local.get $p) (i32.const 16)))
 *             (br_if $inner (i32.lt_u (local.get $p) (local.get $stop))))
 *           (local.set $acc32 (i32x4.add (local.get $acc32)
 *             (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $acc8)))))
 *           (br $outer)))
 *       (local.set $end (i32.add (local.get $end) (i32.and (local.get $n) (i32.const 15))))
 *       (block $tdone
 *         (loop $tail                                 ;; the last 0..15 bytes one by one
 *           (br_if $tdone (i32.ge_u (local.get $p) (local.get $end)))
 *           (local.set $count (i32.add (local.get $count)
 *             (i32.eq (i32.load8_u (local.get $p)) (i32.const 10))))
 *           (local.set $p (i32.add (local.get $p) (i32.const 1)))
 *           (br $tail)))
 *       (i32.add (local.get $count)
 *         (i32.add
 *           (i32.add (i32x4.extract_lane 0 (local.get $acc32)) (i32x4.extract_lane 1 (local.get $acc32)))
 *           (i32.add (i32x4.extract_lane 2 (local.get $acc32)) (i32x4.extract_lane 3 (local.get $acc32)))))))
 */

export const ARENA_CHUNK_BYTES = 1024 * 1024;

const WASM_BASE64 =
	"AGFzbQEAAAABBwFgAn9/AX8DAgEABQQBASAgBxICBm1lbW9yeQIABWNvdW50AAAKxQEBwgECA38De0EK/Q8hBSAAIAFBcHFqIQICQANAIAAgAk8NASAAQfAfaiEDIAMgAksEQCACIQML/QwAAAAAAAAAAAAAAAAAAAAAIQYDQCAGIAD9AAQAIAX9I/1xIQYgAEEQaiEAIAAgA0kNAAsgByAG/X39f/2uASEHDAALCyACIAFBD3FqIQICQANAIAAgAk8NASAEIAAtAABBCkZqIQQgAEEBaiEADAALCyAEIAf9GwAgB/0bAWogB/0bAiAH/RsDampqCw==";

export interface ChunkArena {
	/** Two buffers of ARENA_CHUNK_BYTES, views of the arena's memory. */
	readonly buffers: readonly [Buffer, Buffer];
	/** "\n" bytes in `data` (one of `buffers`, or a view of one) from `from` on. */
	countNewlines(data: Buffer, from: number): number;
}

/** A new arena, or undefined where WebAssembly (or its SIMD) is not available (e.g. --jitless). */
export function createChunkArena(): ChunkArena | undefined {
	let count: (ptr: number, len: number) => number;
	let memory: ArrayBuffer;
	try {
		const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(WASM_BASE64, "base64")));
		count = instance.exports.count as typeof count;
		memory = (instance.exports.memory as WebAssembly.Memory).buffer;
	} catch {
		return undefined;
	}
	const buffers = [
		Buffer.from(memory, 0, ARENA_CHUNK_BYTES),
		Buffer.from(memory, ARENA_CHUNK_BYTES, ARENA_CHUNK_BYTES),
	] as const;
	return {
		buffers,
		countNewlines: (data, from) => {
			if (data.buffer !== memory) throw new Error("countNewlines: not a view of this arena");
			return count(data.byteOffset + from, data.length - from);
		},
	};
}
