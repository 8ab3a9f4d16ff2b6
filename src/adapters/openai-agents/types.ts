/**
 * The @openai/agents shapes this adapter makes and takes, declared here so keel builds and its
 * published types load without the Agents SDK (an optional peer). The frameworks suite's typecheck
 * hands these to the installed SDK's Agent, applyPatchTool and shellTool, so a change of shape
 * there fails CI. Parameters typed by the SDK's own classes (its run context) are left to the SDK.
 */

/** The SDK's FunctionTool, by the fields an Agent's `tools` requires. */
export interface KeelFunctionTool {
	type: "function";
	name: string;
	description: string;
	parameters: any;
	strict: boolean;
	/** Runs the tool (the SDK calls it with its run context and the model's arguments). */
	invoke: (...args: any[]) => Promise<unknown>;
	/** Whether a call waits for a person's approval (never, for keel's tools). */
	needsApproval: (...args: any[]) => Promise<boolean>;
	/** Whether the tool is offered to the model (always, for keel's tools). */
	isEnabled: (...args: any[]) => Promise<boolean>;
}

/** The SDK's ApplyPatchTool (applyPatchTool({ editor })). */
export interface KeelApplyPatchTool {
	type: "apply_patch";
	name: string;
	editor: Editor;
	/** Whether an operation waits for a person's approval (never, for keel's editor). */
	needsApproval: (...args: any[]) => Promise<boolean>;
}

/** An operation of the apply_patch tool: a V4A diff to create or update a file, or a delete. */
export type ApplyPatchOperation =
	| { type: "create_file"; path: string; diff: string }
	| { type: "update_file"; path: string; diff: string; moveTo?: string }
	| { type: "delete_file"; path: string };

/** What an Editor answers for one operation: whether it was applied, and a message for the model. */
export interface ApplyPatchResult {
	status?: "completed" | "failed";
	output?: string;
}

/** The SDK's Editor: what applies apply_patch's operations. */
export interface Editor {
	/** Create a file from the operation's diff. */
	createFile(operation: Extract<ApplyPatchOperation, { type: "create_file" }>): Promise<ApplyPatchResult>;
	/** Apply the operation's diff to a file (and move it, with `moveTo`). */
	updateFile(operation: Extract<ApplyPatchOperation, { type: "update_file" }>): Promise<ApplyPatchResult>;
	/** Delete a file. */
	deleteFile(operation: Extract<ApplyPatchOperation, { type: "delete_file" }>): Promise<ApplyPatchResult>;
}

/** The commands of one shell tool call. */
export interface ShellAction {
	commands: string[];
	timeoutMs?: number;
	maxOutputLength?: number;
}

/** What a Shell answers: each command's output and how it ended. */
export interface ShellResult {
	output: Array<{
		stdout: string;
		stderr: string;
		outcome: { type: "timeout" } | { type: "exit"; exitCode: number | null };
	}>;
}

/** The SDK's Shell (shellTool({ shell })). */
export interface Shell {
	/** Run the action's commands, one after another. */
	run(action: ShellAction): Promise<ShellResult>;
}

/** The part of @openai/agents this adapter calls. */
export interface AgentsSdk {
	tool(options: {
		name: string;
		description: string;
		parameters: unknown;
		strict: boolean;
		execute: (input: unknown, context: unknown, details?: { signal?: AbortSignal }) => Promise<unknown>;
	}): KeelFunctionTool;
	applyPatchTool(options: { editor: Editor }): KeelApplyPatchTool;
	applyDiff(input: string, diff: string, mode: "create"): string;
}
