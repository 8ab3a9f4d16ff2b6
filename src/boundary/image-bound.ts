/**
 * Images a model is shown are bounded like any result, as pi bounds them: at
 * most 2000×2000 pixels and 4.5 MB of base64, with a note of the original size so coordinates can
 * be mapped back. An image that fits is passed through untouched. Otherwise it is scaled down
 * (photon, WebAssembly, loaded on the first image that needs it) and encoded as PNG and as JPEG
 * at falling qualities, the first candidate under the cap winning; if none fits, the size shrinks
 * by a quarter and the candidates are tried again. An image whose header says it is too large to
 * decode safely, or that photon cannot decode, is omitted with a note: never sent at full size.
 */

export const IMAGE_BOUNDS = {
	maxWidth: 2000,
	maxHeight: 2000,
	/** Base64 characters of the image sent (below the 5 MB image limit of common model APIs). */
	maxBase64: 4.5 * 1024 * 1024,
	/** Pixels decoded at most (4 bytes each in memory): larger images are omitted, not decoded. */
	maxPixels: 50_000_000,
} as const;

const JPEG_QUALITIES = [80, 70, 55, 40];

export type BoundedImage =
	| {
			kind: "image";
			data: string;
			mimeType: string;
			width: number;
			height: number;
			originalWidth: number;
			originalHeight: number;
	  }
	| { kind: "omitted"; reason: string };

const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

/** `bytes` as an image a model may be sent, or why it is omitted. */
export async function boundImage(bytes: Buffer, mimeType: string): Promise<BoundedImage> {
	// Loaded by the first image, not by importing keel.
	const { imageSize } = await import("image-size");
	let size: { width?: number; height?: number };
	try {
		size = imageSize(bytes);
	} catch {
		return { kind: "omitted", reason: "its header could not be read" };
	}
	const width = size.width ?? 0;
	const height = size.height ?? 0;
	if (width < 1 || height < 1) return { kind: "omitted", reason: "its header has no dimensions" };
	const fits =
		width <= IMAGE_BOUNDS.maxWidth &&
		height <= IMAGE_BOUNDS.maxHeight &&
		base64Length(bytes.length) <= IMAGE_BOUNDS.maxBase64;
	if (fits) {
		const data = bytes.toString("base64");
		return { kind: "image", data, mimeType, width, height, originalWidth: width, originalHeight: height };
	}
	if (width * height > IMAGE_BOUNDS.maxPixels) {
		return { kind: "omitted", reason: `it is ${width}x${height} pixels, too large to scale down safely` };
	}
	return scaleDown(bytes, width, height);
}

async function scaleDown(
	bytes: Buffer,
	originalWidth: number,
	originalHeight: number,
): Promise<BoundedImage> {
	const photon = (await import("@silvia-odwyer/photon-node")).default;
	let image: InstanceType<typeof photon.PhotonImage> | undefined;
	try {
		image = photon.PhotonImage.new_from_byteslice(new Uint8Array(bytes));
		const scale = Math.min(1, IMAGE_BOUNDS.maxWidth / originalWidth, IMAGE_BOUNDS.maxHeight / originalHeight);
		let w = Math.max(1, Math.round(originalWidth * scale));
		let h = Math.max(1, Math.round(originalHeight * scale));
		for (;;) {
			const resized = photon.resize(image, w, h, photon.SamplingFilter.Lanczos3);
			try {
				const png = resized.get_bytes();
				if (base64Length(png.length) <= IMAGE_BOUNDS.maxBase64)
					return shown(png, "image/png", w, h, originalWidth, originalHeight);
				for (const q of JPEG_QUALITIES) {
					const jpeg = resized.get_bytes_jpeg(q);
					if (base64Length(jpeg.length) <= IMAGE_BOUNDS.maxBase64)
						return shown(jpeg, "image/jpeg", w, h, originalWidth, originalHeight);
				}
			} finally {
				resized.free();
			}
			if (w === 1 && h === 1)
				return { kind: "omitted", reason: "it does not fit the size limit at any scale" };
			w = Math.max(1, Math.floor(w * 0.75));
			h = Math.max(1, Math.floor(h * 0.75));
		}
	} catch {
		return { kind: "omitted", reason: "it could not be decoded" };
	} finally {
		image?.free();
	}
}

function shown(
	encoded: Uint8Array,
	mimeType: string,
	width: number,
	height: number,
	originalWidth: number,
	originalHeight: number,
): BoundedImage {
	const data = Buffer.from(encoded).toString("base64");
	return { kind: "image", data, mimeType, width, height, originalWidth, originalHeight };
}

/** The note for a scaled image (undefined when shown at its own size). */
export function scaleNote(img: Extract<BoundedImage, { kind: "image" }>): string | undefined {
	if (img.width === img.originalWidth && img.height === img.originalHeight) return undefined;
	const factor = (img.originalWidth / img.width).toFixed(2);
	return `[Image: original ${img.originalWidth}x${img.originalHeight}, shown at ${img.width}x${img.height}; multiply coordinates by ${factor} to map them to the original.]`;
}
