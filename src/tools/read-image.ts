/** read's result for an image: bounded (boundary/image-bound.ts), with pi's note when scaled. */
import { boundImage, scaleNote } from "../boundary/image-bound.js";
import { type ToolResult, text } from "./types.js";

/** What read did to an image: scaled (the sizes before and after) or left out (why). */
export type ImageDetails =
	| { omitted: string; bytes: number }
	| { originalWidth: number; originalHeight: number; width: number; height: number; mimeType: string };

export async function imageResult(
	bytes: Buffer,
	mimeType: string,
): Promise<ToolResult<{ image: ImageDetails }>> {
	const img = await boundImage(bytes, mimeType);
	if (img.kind === "omitted") {
		return {
			content: [
				text(
					`Read image file [${mimeType}]\n[Image omitted: ${img.reason}. Inspect it with bash (file, identify) or convert it to a smaller image first.]`,
				),
			],
			details: { image: { omitted: img.reason, bytes: bytes.length } },
		};
	}
	const note = scaleNote(img);
	const details = note
		? {
				image: {
					originalWidth: img.originalWidth,
					originalHeight: img.originalHeight,
					width: img.width,
					height: img.height,
					mimeType: img.mimeType,
				},
			}
		: undefined;
	return {
		content: [
			text(`Read image file [${img.mimeType}]${note ? `\n${note}` : ""}`),
			{ type: "image", data: img.data, mimeType: img.mimeType },
		],
		...(details ? { details } : {}),
	};
}
