/**
 * One bwrap start, built from what keel checked rather than from names bwrap resolves later.
 *
 * Every bind source (the roots, read-only paths, extra binds, the protected set and the directories
 * pinned above it) is opened by keel just before the start: from the path guard's handle on the root
 * (or from "/"), one component at a time, never following a link (local/pin.ts). The descriptors go
 * to bwrap as its descriptors 3, 4, ... and it mounts those open objects (--bind-fd, --ro-bind-fd),
 * then closes them, so a link swapped into a source's path after the check changes nothing; a link
 * met while opening refuses the start (CHANGED_ON_DISK), and the command does not run.
 *
 * Last come the masks: keel's own state (its state directory, the session's spill and payload
 * directories) is covered with an empty tmpfs wherever it would be visible.
 */
import { closeSync, lstatSync, openSync } from "node:fs";
import { pathFact } from "../../boundary/path-facts.js";
import type { DirPins } from "../local/pin.js";
import type { KeyringFilter } from "./keyring-filter.js";
import type { Bind, Sandbox } from "./sandbox.js";

export interface OpenedFds {
	/** In the order the options number them. */
	readonly fds: readonly number[];
	close(): void;
}

export interface LaunchPlan {
	/** bwrap's options up to (not including) --chdir, descriptors numbered from `firstFd`. */
	options(firstFd: number): string[];
	/** What the sandbox is built with: a long-lived one is reused only while this matches. */
	readonly key: string;
	/** Opens every source now; throws CHANGED_ON_DISK (nothing left open) when one is not as checked. */
	open(): OpenedFds;
}

export interface LaunchParts {
	sandbox: Sandbox;
	/** The protected set's binds (protect.ts), mounted after the sandbox's own. */
	protect: readonly Bind[];
	/** Directories masked with an empty tmpfs (only those inside a bound path are passed). */
	masks: readonly string[];
	pins: DirPins;
	keyring: KeyringFilter;
}

/** Linux's O_PATH (Node does not name it). */
const O_PATH = 0o10000000;

function within(parent: string, child: string): boolean {
	return child === parent || child.startsWith(parent === "/" ? "/" : `${parent}/`);
}

/**
 * The masks that matter: those below a bound path (nothing else is in the sandbox anyway), where a
 * directory is or could be made (bwrap makes a missing mount point; a read-only bind has no room).
 */
export function visibleMasks(candidates: Iterable<string>, sandbox: Sandbox): string[] {
	return [...new Set(candidates)]
		.filter(
			(m) =>
				sandbox.bound.some((b) => within(b, m) && b !== m) &&
				(sandbox.roots.some((r) => within(r, m)) || lstatSync(m, { throwIfNoEntry: false })?.isDirectory()),
		)
		.sort();
}

export function launchPlan(parts: LaunchParts): LaunchPlan {
	const binds = [...parts.sandbox.binds, ...parts.protect];
	const options = (firstFd: number) => {
		const out = [...parts.sandbox.args];
		binds.forEach((b, i) => {
			out.push(b.readOnly ? "--ro-bind-fd" : "--bind-fd", String(firstFd + 1 + i), b.target);
		});
		for (const m of parts.masks) out.push("--tmpfs", m);
		out.push(...parts.sandbox.flags, "--seccomp", String(firstFd));
		return out;
	};
	return {
		options,
		key: JSON.stringify([options(3), binds.map((b) => b.source)]),
		open() {
			const fds: number[] = [];
			const close = () => {
				for (const fd of fds.splice(0)) closeSync(fd);
			};
			try {
				fds.push(parts.keyring.open());
				for (const b of binds) fds.push(openSource(parts.pins, b));
			} catch (e) {
				close();
				throw e;
			}
			return { fds, close };
		},
	};
}

/** A descriptor of its own on `b.source`, opened without following a link. */
function openSource(pins: DirPins, b: Bind): number {
	try {
		if (b.dir) {
			const dir = pins.open(b.source);
			try {
				// The guard's handle on a root stays the guard's: bwrap gets a second one, opened
				// through /proc/self/fd (the open directory itself, not a lookup by name).
				return openSync(dir.path, O_PATH);
			} finally {
				dir.release();
			}
		}
		return pins.openFile(b.source).fd;
	} catch (e) {
		throw pathFact("changed-during-sandbox-setup", b.source, {}, e);
	}
}
