/**
 * The shapes of deepagents' sandbox backend protocol (SandboxBackendProtocolV2) that KeelSandbox
 * returns, declared here so keel builds and its published types load without deepagents (an
 * optional peer). Each lists only the fields keel fills in; the frameworks suite's typecheck passes
 * a KeelSandbox to the installed deepagents, so a change of shape there fails CI.
 */

/** An entry of ls and glob. */
export interface FileInfo {
	path: string;
	is_dir?: boolean;
	size?: number;
	modified_at?: string;
}

/** A file's content as readRaw gives it (deepagents' v2 file data). */
export interface FileData {
	content: string | Uint8Array;
	mimeType: string;
	created_at: string;
	modified_at: string;
}

/** Why an upload or download failed, in deepagents' vocabulary. */
export type FileOperationError = "file_not_found" | "permission_denied" | "is_directory" | "invalid_path";

export interface LsResult {
	error?: string;
	files?: FileInfo[];
}

export interface ReadResult {
	error?: string;
	content?: string | Uint8Array;
	mimeType?: string;
	totalLines?: number;
	nextOffset?: number;
}

export interface ReadRawResult {
	error?: string;
	data?: FileData;
}

export interface WriteResult {
	error?: string;
	path?: string;
	filesUpdate?: Record<string, FileData> | null;
}

export interface EditResult extends WriteResult {
	occurrences?: number;
}

export interface GrepResult {
	error?: string;
	matches?: Array<{ path: string; line: number; text: string }>;
	truncated?: boolean;
}

export interface GlobResult {
	error?: string;
	files?: FileInfo[];
	truncated?: boolean;
}

export interface ExecuteResponse {
	output: string;
	exitCode: number | null;
	truncated: boolean;
}

export interface FileUploadResponse {
	path: string;
	error: FileOperationError | null;
}

export interface FileDownloadResponse {
	path: string;
	content: Uint8Array | null;
	error: FileOperationError | null;
}
