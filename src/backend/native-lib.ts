/**
 * koffi and this process's libc, for the few calls Node does not offer (local/libc.ts,
 * bwrap/inotify.ts, spawn/posix-spawn.ts). `require("koffi")` took 13-19 ms once per process on
 * this machine; each caller loads it lazily, on the first call that needs it.
 */
import { createRequire } from "node:module";

export interface NativeLib {
	/** koffi ships no types for its dynamic binding. */
	readonly koffi: any;
	/** dlopen(NULL): the libc node itself is linked against, glibc or musl. */
	readonly lib: any;
	/** The errno of the last call made through koffi, by name ("EWOULDBLOCK", ...). */
	errnoName(): string;
}

/** koffi and libc, or null where koffi cannot load (a platform without its prebuilt binary). */
export function loadNativeLib(): NativeLib | null {
	if (process.platform !== "linux") return null;
	try {
		const koffi = createRequire(import.meta.url)("koffi");
		const lib = koffi.load(null);
		const names = new Map<number, string>(
			Object.entries(koffi.os.errno as Record<string, number>).map(([k, v]) => [v, k]),
		);
		return {
			koffi,
			lib,
			errnoName: () => {
				const n = koffi.errno();
				return names.get(n) ?? `errno ${n}`;
			},
		};
	} catch {
		return null;
	}
}

/** A binding built on first use from the native lib, then returned as is (null: unavailable). */
export function lazyBinding<T>(build: (native: NativeLib) => T): () => T | null {
	let bound: T | null | undefined;
	return () => {
		if (bound === undefined) {
			const native = loadNativeLib();
			try {
				bound = native ? build(native) : null;
			} catch {
				bound = null; // a libc without one of the symbols (an old glibc, musl)
			}
		}
		return bound;
	};
}
