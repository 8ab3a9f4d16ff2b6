/**
 * `read_bytes`: a file's bytes exactly as they are on disk, for hosts (the library's
 * readFileBytes, a sandbox's download), never offered to a model. The same roots and path checks
 * as `read`, on every backend, and the file read as opened; but no decoding, no line window, no
 * look-alike names, and no read recorded (bytes taken this way do not license an overwrite). At
 * most `maxBytes` (default 64 MiB) are held: a larger file is TOO_LARGE, and nothing is read.
 */
import { KeelError } from "../boundary/errors.js";
import { shownAs } from "../boundary/path-facts.js";
import { type Accepted, number, object, optional, string } from "../boundary/schema.js";
import { fromSystemError } from "../boundary/system-errors.js";
import { formatSize } from "../boundary/truncate.js";
import { requireFile, statPath } from "../edit/snapshot.js";
import { checkAborted, positiveInt } from "./common.js";
import { defineTool, type ToolResult, text } from "./types.js";

/** The most a read_bytes holds when the caller names no bound. */
export const DEFAULT_MAX_READ_BYTES = 64 * 1024 * 1024;
/** The most it holds at all: a JavaScript Buffer's own practical bound on these machines. */
const MAX_READ_BYTES = 1024 * 1024 * 1024;

const schema = object({
	path: string({ description: "The file, relative to the workspace or absolute inside a root" }),
	maxBytes: optional(number({ description: `The most bytes to hold (default ${DEFAULT_MAX_READ_BYTES})` })),
});

/** read_bytes's arguments: the schema's type. */
export type ReadBytesArgs = Accepted<typeof schema>;

/** read_bytes's result details: the file's bytes, and the size its open handle had. */
export interface ReadBytesDetails {
	bytes: Uint8Array;
	size: number;
}

export const readBytesTool = defineTool({
	name: "read_bytes",
	label: "read bytes",
	description: "A file's bytes exactly, for the host (not offered to a model).",
	parameters: schema,
	annotations: { readOnly: true, destructive: false, idempotent: true },
	async execute(args, { host, signal }): Promise<ToolResult<ReadBytesDetails>> {
		const maxBytes = Math.min(positiveInt("maxBytes", args.maxBytes, DEFAULT_MAX_READ_BYTES), MAX_READ_BYTES);
		const target = await host.resolvePath(args.path, "read");
		try {
			requireFile(await statPath(host, target.canonical), target.canonical);
			checkAborted(signal);
			const { stat, bytes } = await host.files.readCurrent(target.canonical, maxBytes).catch((e) => {
				throw fromSystemError(e, target.canonical);
			});
			if (bytes === null) {
				throw new KeelError(
					"TOO_LARGE",
					`${args.path} is ${formatSize(stat.size)}, more than the ${formatSize(maxBytes)} this read may hold; raise maxBytes or copy it with a command.`,
					{ path: args.path, details: { size: stat.size, maxBytes } },
				);
			}
			return {
				content: [text(`${args.path}: ${bytes.length} bytes`)],
				details: { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), size: stat.size },
			};
		} catch (e) {
			throw shownAs(e, args.path);
		}
	},
});
