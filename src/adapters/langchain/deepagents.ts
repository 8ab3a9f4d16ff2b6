/**
 * A deepagents sandbox backend (SandboxBackendProtocolV2) over a keel session: every method is one
 * or more keel tool calls through the binding, so the roots, the bash policy, compare-and-swap
 * writes and the bounds hold for a deepagents agent as for any other.
 *
 * keel's tools answer in text for the model; this file reads the few facts deepagents wants as
 * structure (entries, matches, continuation offsets) back out of that text (the patterns that
 * depend on keel's exact text: deepagents-text.ts). deepagents counts read offsets from 0, keel 1.
 */
import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import { readFileBytes } from "../../index.js";
import type { SessionApi } from "../../session.js";
import { type BoundResult, type BoundTool, bindTools } from "../binding.js";
import { DOWNLOAD_ERRORS, failure, GREP_ROW, READ_NOTICE } from "./deepagents-text.js";
import type {
	EditResult,
	ExecuteResponse,
	FileDownloadResponse,
	FileInfo,
	FileUploadResponse,
	GlobResult,
	GrepResult,
	LsResult,
	ReadRawResult,
	ReadResult,
	WriteResult,
} from "./deepagents-types.js";

/** A deepagents sandbox backend over a keel session: its files, searches and commands go through keel's tools. */
export class KeelSandbox {
	readonly id = `keel-${randomBytes(6).toString("hex")}`;
	private readonly tools: Map<string, BoundTool>;

	constructor(private readonly session: SessionApi) {
		this.tools = new Map(bindTools(session).map((t) => [t.name, t]));
	}

	private call(name: string, args: Record<string, unknown>): Promise<BoundResult> {
		const tool = this.tools.get(name);
		if (!tool) {
			const error = {
				code: "UNKNOWN_TOOL" as const,
				message: `This session has no ${name} tool.`,
				retry: "change-approach" as const,
			};
			return Promise.resolve({
				isError: true,
				content: [],
				text: `[UNKNOWN_TOOL] ${error.message}`,
				images: [],
				error,
				elapsedMs: 0,
			});
		}
		return tool.call(args);
	}

	private abs(path: string): string {
		return posix.resolve(this.session.workspace, path);
	}

	/** The entries of a directory, with their kind and size. */
	async ls(path: string): Promise<LsResult> {
		const r = await this.call("ls", { path, limit: 100_000 });
		if (r.isError) return r.error?.code === "NOT_FOUND" ? { files: [] } : { error: failure(r, "ls", path) };
		if (r.text === "(empty directory)") return { files: [] };
		const dir = this.abs(path);
		const files: FileInfo[] = [];
		for (const line of r.text.split("\n")) {
			if (line === "" || line.startsWith("[")) break;
			const isDir = line.endsWith("/");
			files.push({ path: posix.join(dir, isDir ? line.slice(0, -1) : line), is_dir: isDir });
		}
		return { files };
	}

	/** A page of a file's lines (`offset` counts from 0, as deepagents does). */
	async read(filePath: string, offset = 0, limit?: number): Promise<ReadResult> {
		// limit 0 asks for nothing, but the file must still be readable.
		const r = await this.call("read", {
			path: filePath,
			offset: offset + 1,
			...(limit === undefined ? {} : { limit: Math.max(limit, 1) }),
		});
		if (!r.isError && limit === 0) return { content: "", mimeType: "text/plain" };
		if (r.isError) {
			if (r.error?.code === "OFFSET_OUT_OF_RANGE") return { content: "" };
			return { error: failure(r, "read_file", filePath) };
		}
		const image = r.images[0];
		if (image) return { content: Buffer.from(image.data, "base64"), mimeType: image.mimeType };
		const notice = READ_NOTICE.exec(r.text);
		if (!notice) return { content: r.text, mimeType: "text/plain" };
		const next = notice[1] ? Number(notice[1]) : Number(notice[2]) - 1;
		return { content: r.text.slice(0, notice.index), mimeType: "text/plain", nextOffset: next };
	}

	/** A whole file, read page by page, in deepagents' raw shape (its times are the read's: keel reports none). */
	async readRaw(filePath: string): Promise<ReadRawResult> {
		const pages: string[] = [];
		let offset = 0;
		for (;;) {
			const page = await this.read(filePath, offset);
			if (page.error) return { error: page.error };
			const now = new Date().toISOString();
			if (typeof page.content !== "string") {
				return {
					data: {
						content: page.content ?? new Uint8Array(),
						mimeType: page.mimeType ?? "",
						created_at: now,
						modified_at: now,
					},
				};
			}
			pages.push(page.content);
			if (page.nextOffset === undefined) {
				return {
					data: { content: pages.join("\n"), mimeType: "text/plain", created_at: now, modified_at: now },
				};
			}
			offset = page.nextOffset;
		}
	}

	/** Write a file through keel's `write` tool (an existing file must have been read first). */
	async write(filePath: string, content: string): Promise<WriteResult> {
		const r = await this.call("write", { path: filePath, content });
		if (!r.isError) return { path: filePath, filesUpdate: null };
		// The unified palette writes through its file tool.
		if (r.error?.code === "UNKNOWN_TOOL")
			return this.viaFile([{ type: "write", path: filePath, content }], filePath, "write_file");
		return { error: failure(r, "write_file", filePath) };
	}

	/**
	 * deepagents' edit contract over keel's edit: old_string must be found once unless replaceAll
	 * (then every place is replaced and counted); an edit whose new text equals the old succeeds
	 * when the text is there, changing nothing (keel itself answers NO_CHANGE, which would tell
	 * the model its edit failed).
	 */
	async edit(
		filePath: string,
		oldString: string,
		newString: string,
		replaceAll = false,
	): Promise<EditResult> {
		if (oldString === newString) return this.unchangedEdit(filePath, oldString);
		const unified = this.tools.has("file");
		if (replaceAll && !unified) {
			return {
				error:
					"replace_all is not available on this backend: give old_string enough surrounding text to be unique, and edit each place.",
			};
		}
		const edit = { oldText: oldString, newText: newString, ...(replaceAll ? { replaceAll: true } : {}) };
		const r = unified
			? await this.call("file", { queries: [{ type: "edit", path: filePath, edits: [edit] }] })
			: await this.call("edit", { path: filePath, edits: [edit] });
		if (r.isError) return { error: failure(r, "edit_file", filePath) };
		const results = (r.details as { results?: Array<{ replacements?: number }> } | undefined)?.results;
		const occurrences = replaceAll ? results?.[0]?.replacements : 1;
		if (occurrences === undefined) {
			return { error: `keel edited ${filePath} but did not say how many places it replaced.` };
		}
		return { path: filePath, filesUpdate: null, occurrences };
	}

	/** An edit that would change nothing: a success when the text is in the file, as deepagents has it. */
	private async unchangedEdit(filePath: string, text: string): Promise<EditResult> {
		const raw = await this.readRaw(filePath);
		if (raw.error || !raw.data) return { error: raw.error ?? `File '${filePath}' not found.` };
		const content = raw.data.content;
		if (typeof content !== "string") return { error: `'${filePath}' is not a text file.` };
		if (text === "") {
			return content === ""
				? { path: filePath, filesUpdate: null, occurrences: 0 }
				: { error: "old_string must not be empty unless the file is empty." };
		}
		if (!content.includes(text)) return { error: `String not found in file '${filePath}'.` };
		return { path: filePath, filesUpdate: null, occurrences: 1 };
	}

	/** Delete a file. */
	async delete(filePath: string) {
		if (!this.tools.has("file")) return { error: "Deleting files is not available on this backend." };
		const r = await this.call("file", { queries: [{ type: "delete", path: filePath }] });
		return r.isError ? { error: failure(r, "delete", filePath) } : { path: filePath, filesUpdate: null };
	}

	/** Lines matching a literal pattern, under `path`, optionally only in files matching `glob`. */
	async grep(
		pattern: string,
		path?: string | null,
		glob?: string | null,
		maxCount?: number | null,
	): Promise<GrepResult> {
		const where = path ?? ".";
		const args = {
			pattern,
			path: where,
			literal: true,
			limit: maxCount ?? 100_000,
			...(glob ? { glob } : {}),
		};
		const r = await this.call("grep", args);
		if (r.isError)
			return r.error?.code === "NOT_FOUND" ? { matches: [] } : { error: failure(r, "grep", where) };
		if (r.text === "No matches found") return { matches: [] };
		const base = this.abs(where);
		// A file searched directly is shown by its name; a directory's matches relative to it.
		const dirOf = (name: string) => (posix.basename(base) === name ? posix.dirname(base) : base);
		const matches = [];
		for (const row of r.text.split("\n")) {
			const m = GREP_ROW.exec(row);
			if (m) matches.push({ path: posix.join(dirOf(m[1]), m[1]), line: Number(m[2]), text: m[3] });
		}
		return {
			matches,
			truncated: Boolean((r.details as Record<string, unknown> | undefined)?.matchLimitReached),
		};
	}

	/** Files matching a glob pattern under `path`. */
	async glob(pattern: string, path = "."): Promise<GlobResult> {
		const r = await this.call("find", { pattern, path, limit: 100_000 });
		if (r.isError) return r.error?.code === "NOT_FOUND" ? { files: [] } : { error: failure(r, "glob", path) };
		if (r.text === "No files found matching pattern") return { files: [] };
		const files: FileInfo[] = [];
		for (const line of r.text.split("\n")) {
			if (line === "" || line.startsWith("[")) break;
			const isDir = line.endsWith("/");
			files.push({ path: isDir ? line.slice(0, -1) : line, is_dir: isDir });
		}
		return { files };
	}

	/** Run a shell command in the workspace: its output and exit code. */
	async execute(command: string): Promise<ExecuteResponse> {
		const r = await this.call("bash", { command });
		const facts = (r.details ?? r.error?.details) as Record<string, unknown> | undefined;
		const truncated = Boolean(facts?.truncation);
		if (!r.isError) return { output: r.text, exitCode: 0, truncated };
		const exitCode = r.error?.details?.exitCode;
		// A command that ran and failed shows its output and status; anything else keel's error text.
		const output = r.error?.code === "COMMAND_FAILED" ? r.error.message : failure(r, "execute");
		return { output, exitCode: typeof exitCode === "number" ? exitCode : 1, truncated };
	}

	/** Text files only: keel writes text; bytes that are not UTF-8 are refused. */
	async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
		const out: FileUploadResponse[] = [];
		for (const [path, bytes] of files) {
			let content: string;
			try {
				content = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
			} catch {
				out.push({ path, error: "invalid_path" });
				continue;
			}
			const r = await this.write(path, content);
			out.push({ path, error: r.error ? "permission_denied" : null });
		}
		return out;
	}

	/**
	 * The bytes of each file exactly as they are on disk (readFileBytes: the roots and path checks
	 * of read, no decoding), or why it could not be read.
	 */
	async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
		const out: FileDownloadResponse[] = [];
		for (const path of paths) {
			// The bytes on disk, whatever their encoding and line ends (read would give text).
			const r = await readFileBytes(this.session, path);
			if (!r.ok)
				out.push({ path, content: null, error: DOWNLOAD_ERRORS[r.error.code] ?? "permission_denied" });
			else out.push({ path, content: r.details?.bytes ?? new Uint8Array(), error: null });
		}
		return out;
	}

	private async viaFile(queries: Record<string, unknown>[], path: string, op: string): Promise<WriteResult> {
		const r = await this.call("file", { queries });
		return r.isError ? { error: failure(r, op, path) } : { path, filesUpdate: null };
	}
}
