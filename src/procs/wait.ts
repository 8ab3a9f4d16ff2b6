/**
 * A wait on one process: until a pattern matches its output after a cursor, it exits, the timeout
 * passes or the call is aborted, telling a progress listener the newest output meanwhile. Apart
 * from the table, which owns the entries and reads the answer, because this is the one part that
 * listens to output as it arrives.
 */
import { setLongTimeout } from "../boundary/timing.js";
import { utf8CompleteEnd } from "../boundary/truncate.js";
import { plainText } from "./plain-text.js";
import type { Entry } from "./types.js";

/** How much of a match's context a pattern wait looks back over, beyond the newest chunk. */
const MATCH_LOOKBACK_BYTES = 64 * 1024;
/** How much of the newest output a wait hands to its progress listener. */
const PROGRESS_TAIL_BYTES = 4096;
/** After the exit, how long output still in the pipes is waited for. */
export const DRAIN_MS = 200;

/** What a wait waits for, and for how long. */
export interface WaitOptions {
	pattern?: RegExp;
	timeoutMs: number;
	signal?: AbortSignal;
	onOutput?: (text: string) => void;
}

/** Waits as the table's wait() does on `e`, from output cursor `from`; what matched, and whether the timeout passed. */
export async function untilOutput(
	e: Entry,
	from: number,
	opts: WaitOptions,
): Promise<{ matched?: string; timedOut: boolean }> {
	const tell = () => {
		if (!opts.onOutput || e.log.total <= from) return;
		const start = Math.max(from, e.log.total - PROGRESS_TAIL_BYTES, e.log.oldest);
		const raw = e.log.read(start, e.log.total - start).bytes;
		const textOf = raw.subarray(0, utf8CompleteEnd(raw)).toString("utf8");
		opts.onOutput(e.screen ? plainText(textOf) : textOf);
	};
	let matched: string | undefined;
	const look = (): boolean => {
		if (opts.pattern) {
			const start = Math.max(from, e.log.total - MATCH_LOOKBACK_BYTES, e.log.oldest);
			const raw = e.log.read(start, e.log.total - start).bytes.toString("utf8");
			const m = opts.pattern.exec(e.screen ? plainText(raw) : raw);
			if (m) {
				matched = m[0];
				return true;
			}
		}
		return e.state !== "running";
	};
	let timedOut = false;
	if (!look()) {
		timedOut = await new Promise<boolean>((resolve) => {
			const done = (t: boolean) => {
				e.listeners.delete(check);
				timer.clear();
				opts.signal?.removeEventListener("abort", onAbort);
				resolve(t);
			};
			const check = () => {
				if (look()) done(false);
				else tell();
			};
			const onAbort = () => done(false);
			const timer = setLongTimeout(() => done(true), opts.timeoutMs);
			e.listeners.add(check);
			opts.signal?.addEventListener("abort", onAbort, { once: true });
		});
	}
	if (e.state !== "running" && matched === undefined) {
		await Promise.race([e.proc.drained, new Promise((r) => setTimeout(r, DRAIN_MS))]);
	}
	return { ...(matched !== undefined ? { matched } : {}), timedOut };
}
