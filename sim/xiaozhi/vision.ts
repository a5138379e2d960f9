/**
 * A simulated XiaoZhi vision service (the backend's `/mcp/vision/explain`, a port of its own as
 * the real server runs it): a device posts a picture as multipart/form-data (`question`, then
 * `file`) with `Device-Id`, `Client-Id` and `Authorization: Bearer <token>` headers, and gets
 * `{"success":true,"action":"RESPONSE","response":"…"}` — or `{"success":false,"message":…}` for a
 * wrong token or a body that is not a picture. Every upload is recorded for tests.
 *
 * Give the agent its address through the XiaoZhi simulator's `initializeParams`:
 * `{capabilities: {vision: {url: vision.url, token}}}`.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { boundPort, closeServer, hostPort, listen } from '../kit/listen.js';

export const VISION_PATH = '/mcp/vision/explain';
/** The real backend refuses pictures over 5 MB. */
export const MAX_VISION_BYTES = 5 * 1024 * 1024;

export interface VisionUpload {
  deviceId?: string;
  clientId?: string;
  authorization?: string;
  /** The form's fields in the order they came. */
  fieldOrder: string[];
  question?: string;
  file?: { filename?: string; contentType?: string; data: Buffer };
}

export interface VisionSimOptions {
  port?: number;
  host?: string;
  /** Required as `Authorization: Bearer <token>`; none → any caller. */
  token?: string;
  /** The answer to a question about a picture (default: a fixed sentence naming the question). */
  answer?: (question: string, image: Buffer) => string;
}

export class VisionSim {
  readonly uploads: VisionUpload[] = [];

  private constructor(
    private readonly server: Server,
    private readonly options: VisionSimOptions,
  ) {}

  static async start(options: VisionSimOptions = {}): Promise<VisionSim> {
    const server = createServer();
    const sim = new VisionSim(server, options);
    server.on('request', (req, res) => void sim.handle(req, res));
    await listen(server, options, () => undefined);
    return sim;
  }

  get url(): string {
    return `http://${hostPort(this.options.host ?? '127.0.0.1', boundPort(this.server))}${VISION_PATH}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections?.();
    return closeServer(this.server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reply = (status: number, body: Record<string, unknown>): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (new URL(req.url ?? '/', 'http://sim').pathname !== VISION_PATH)
      return reply(404, { success: false, message: 'not found' });
    if (req.method !== 'POST') return reply(405, { success: false, message: 'POST only' });
    const body = await readBody(req).catch(() => undefined);
    if (!body) return reply(413, { success: false, message: 'the picture is too large' });
    const header = (name: string): string | undefined => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const upload: VisionUpload = {
      deviceId: header('device-id'),
      clientId: header('client-id'),
      authorization: header('authorization'),
      fieldOrder: [],
    };
    for (const part of parseMultipart(header('content-type') ?? '', body)) {
      upload.fieldOrder.push(part.name);
      if (part.name === 'question') upload.question = part.data.toString('utf8');
      if (part.name === 'file')
        upload.file = { filename: part.filename, contentType: part.contentType, data: part.data };
    }
    this.uploads.push(upload);
    const token = this.options.token;
    if (token !== undefined && upload.authorization !== `Bearer ${token}`)
      return reply(401, { success: false, message: '无效的认证token或token已过期' });
    if (!upload.deviceId) return reply(200, { success: false, message: '缺少设备ID' });
    if (!upload.question) return reply(200, { success: false, message: '缺少问题字段' });
    if (!upload.file || !isPicture(upload.file.data))
      return reply(200, { success: false, message: '不支持的文件格式，请上传有效的图片文件' });
    const answer =
      this.options.answer?.(upload.question, upload.file.data) ??
      `I see a screen (asked: ${upload.question})`;
    reply(200, { success: true, action: 'RESPONSE', response: answer });
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_VISION_BYTES + 64 * 1024) {
        req.destroy();
        reject(new Error('too large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** JPEG, PNG, GIF, WEBP or BMP by their first bytes, as the backend checks. */
function isPicture(data: Buffer): boolean {
  const starts = (bytes: number[], at = 0) => bytes.every((b, i) => data[at + i] === b);
  return (
    starts([0xff, 0xd8, 0xff]) ||
    starts([0x89, 0x50, 0x4e, 0x47]) ||
    starts([0x47, 0x49, 0x46, 0x38]) ||
    (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) ||
    starts([0x42, 0x4d])
  );
}

interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** The parts of a multipart/form-data body (RFC 7578), bounded by the body itself. */
export function parseMultipart(contentType: string, body: Buffer): Part[] {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) return [];
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let at = body.indexOf(delimiter);
  while (at >= 0 && parts.length < 32) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    // Each part: CRLF, headers, CRLF CRLF, content, CRLF before the next delimiter.
    const raw = body.subarray(start + 2, next - 2);
    const split = raw.indexOf('\r\n\r\n');
    if (split >= 0) {
      const headers = raw.subarray(0, split).toString('utf8');
      const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
      const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
      if (name !== undefined)
        parts.push({
          name,
          filename: /\bfilename="([^"]*)"/i.exec(disposition)?.[1],
          contentType: /content-type:\s*([^\r\n]*)/i.exec(headers)?.[1]?.trim(),
          data: Buffer.from(raw.subarray(split + 4)),
        });
    }
    at = next;
  }
  return parts;
}
