/**
 * A service result that carries a picture. Dialects that can send images (MCP `tools/call`
 * results: XiaoZhi, the MCP endpoint) send `text` and the image as MCP image content; the others
 * never get one (the service refuses first, knowing the dialect).
 */
export interface ImageResult {
  kind: 'image-result';
  /** What the model reads about the picture. */
  text: string;
  image: { mimeType: string; /** base64 */ data: string };
}

export function imageResult(text: string, mimeType: string, data: Buffer): ImageResult {
  return { kind: 'image-result', text, image: { mimeType, data: data.toString('base64') } };
}

export function isImageResult(data: unknown): data is ImageResult {
  const d = data as Partial<ImageResult> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    d.kind === 'image-result' &&
    typeof d.text === 'string' &&
    typeof d.image?.data === 'string' &&
    typeof d.image?.mimeType === 'string'
  );
}

/** Dialects whose call results can carry an image. */
export const IMAGE_DIALECTS: ReadonlySet<string> = new Set(['xiaozhi', 'endpoint']);
