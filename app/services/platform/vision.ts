/**
 * A XiaoZhi server's vision service, asked the way the device firmware asks it: an HTTP POST of
 * multipart/form-data with the `question` field, then the picture as `file`; the device's
 * `Device-Id` and `Client-Id` headers and `Authorization: Bearer <token>` when the server gave
 * one. It answers `{"success": true, "response": "…"}` or `{"success": false, "message": "…"}`.
 */
import { ServiceFailure, type VisionTarget } from '../service.js';
import type { ScreenImage } from './desktop.js';

/** An answer is a sentence or a paragraph; anything bigger is not one. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** The vision address, if it is one this agent will post to (http or https). */
export function visionUrl(target: VisionTarget | undefined): URL | undefined {
  if (!target?.url) return undefined;
  try {
    const url = new URL(target.url);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

export async function askVision(
  target: VisionTarget,
  image: ScreenImage,
  question: string,
  signal: AbortSignal,
): Promise<string> {
  const url = visionUrl(target);
  if (!url) throw new ServiceFailure('unsupported', 'the server gave no usable vision address');
  const form = new FormData();
  form.append('question', question);
  const ext = image.mimeType === 'image/png' ? 'png' : 'jpg';
  form.append('file', new Blob([image.data], { type: image.mimeType }), `screen.${ext}`);
  const headers: Record<string, string> = {};
  if (target.deviceId) headers['Device-Id'] = target.deviceId;
  if (target.clientId) headers['Client-Id'] = target.clientId;
  if (target.token) headers.Authorization = `Bearer ${target.token}`;

  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', body: form, headers, signal, redirect: 'error' });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new ServiceFailure(
      'service_error',
      `the server's vision service at ${url.host} could not be reached: ${(err as Error).message}`,
    );
  }
  const text = await boundedText(res, signal);
  let json:
    | {
        success?: unknown;
        response?: unknown;
        result?: unknown;
        answer?: unknown;
        message?: unknown;
      }
    | undefined;
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    json = undefined;
  }
  if (!res.ok || json?.success === false) {
    const why = typeof json?.message === 'string' ? json.message : `HTTP ${res.status}`;
    throw new ServiceFailure(
      'service_error',
      `the server's vision service refused the picture: ${why.slice(0, 300)}`,
    );
  }
  for (const key of ['response', 'result', 'answer'] as const) {
    const value = json?.[key];
    if (typeof value === 'string') return value;
  }
  throw new ServiceFailure('service_error', "the server's vision service sent no answer");
}

async function boundedText(res: Response, signal: AbortSignal): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    if (signal.aborted) {
      await reader.cancel().catch(() => undefined);
      throw signal.reason;
    }
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new ServiceFailure(
        'service_error',
        "the server's vision service answered with too much data",
      );
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
