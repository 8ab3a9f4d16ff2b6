/**
 * A keel result as the AI SDK's tool output for the model (ToolResultOutput), shared by keel/ai-sdk
 * and keel/mastra (whose models are AI SDK models). Written out here so keel/mastra needs no "ai".
 * ai 5 takes images as "media", ai 6 as "image-data", ai 7 as "file" with tagged data.
 */
import type { BoundResult } from "./binding.js";

type ToolResultOutputPart =
	| { type: "text"; text: string }
	| { type: "file"; mediaType: string; data: { type: "data"; data: string } }
	| { type: "image-data" | "media"; data: string; mediaType: string };

export type ToolResultOutput =
	| { type: "text" | "error-text"; value: string }
	| { type: "content"; value: ToolResultOutputPart[] };

export function toModelOutput(r: BoundResult, aiMajor: number): ToolResultOutput {
	if (r.isError) return { type: "error-text", value: r.text };
	if (r.images.length === 0) return { type: "text", value: r.text };
	return {
		type: "content",
		value: r.content.map((c) => {
			if (c.type === "text") return { type: "text", text: c.text };
			if (aiMajor >= 7) return { type: "file", mediaType: c.mimeType, data: { type: "data", data: c.data } };
			return { type: aiMajor === 6 ? "image-data" : "media", data: c.data, mediaType: c.mimeType };
		}),
	};
}
