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
export const IMAGE_DIALECTS: ReadonlySet<string> = new Set(['xiaozhi', 'endpoint', 'mcp']);

/**
 * A result with structured content (an imported tool that declared an output schema), for MCP
 * clients of the agent: they get `structured` as `structuredContent` beside the text. Only the
 * `mcp` dialect is given one; every other dialect gets the text.
 */
export interface StructuredResult {
  kind: 'structured-result';
  text: string;
  structured: Record<string, unknown>;
}

export function isStructuredResult(data: unknown): data is StructuredResult {
  const d = data as Partial<StructuredResult> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    d.kind === 'structured-result' &&
    typeof d.text === 'string' &&
    typeof d.structured === 'object' &&
    d.structured !== null &&
    !Array.isArray(d.structured)
  );
}
