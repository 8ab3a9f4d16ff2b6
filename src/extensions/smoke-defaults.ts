/** The limits of a smoke test when its options do not set them (smoke.ts). */
export const SMOKE_DEFAULTS = {
	timeoutMs: 10_000,
	heapMb: 128,
	/** RLIMIT_DATA: the V8 heap's pages count too, so it sits well above the heap limit. */
	dataMb: 512,
	outputHeadBytes: 2048,
} as const;
