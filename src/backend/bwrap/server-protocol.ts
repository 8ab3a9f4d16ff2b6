/**
 * What the host and the sandbox's command server say to each other: the requests for a command
 * (piped, or in a terminal), the messages the server answers with, and how a signal number and
 * an environment travel. Apart from the server's host side (server.ts), which runs the sandbox
 * and keeps its state, so that the framing reads in one place beside server-code.ts.
 */
import { constants } from "node:os";
import type { OutputStream } from "../run-group.js";

/** Signal names by number, as the server reports a signal that ended a command. */
export const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
	Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
);

/** One command run through the server, its output streamed back as it comes. */
export interface ServerRunRequest {
	argv: readonly string[];
	cwd: string;
	env: NodeJS.ProcessEnv;
	timeoutMs?: number;
	signal?: AbortSignal;
	onData: (chunk: Buffer, stream: OutputStream) => void;
}

/** One command in a pseudo-terminal made inside the sandbox (stdout and stderr are one stream). */
export interface ServerTerminalRequest {
	argv: readonly string[];
	cwd: string;
	env: NodeJS.ProcessEnv;
	cols: number;
	rows: number;
	onData: (chunk: Buffer) => void;
}

/** One line the server writes to the host (JSON): whichever fields the message needs. */
export interface Message {
	ready?: number;
	fatal?: string;
	tainted?: string;
	i?: number;
	o?: string;
	e?: string;
	exit?: number | null;
	sig?: number | null;
	clean?: boolean;
	started?: number;
}

/** The environment as the server takes it: names with a value only. */
export function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
	return out;
}
