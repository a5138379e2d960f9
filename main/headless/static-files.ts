/**
 * The built renderer over HTTP for the browser host: files under one folder, nothing else. No
 * directory listings, no dot-files, no way out of the folder (decoded `..`, encoded slashes and
 * symlinks are all refused with 404), and the headers that keep the page's script to its own.
 */
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.onnx': 'application/octet-stream',
};

/** The page may load and connect only to this origin, and may not be framed. */
export function contentSecurityPolicy(port: number): string {
  return [
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    `connect-src 'self' ws://127.0.0.1:${port}`,
    "media-src 'self' blob:",
    // The bridge worker (renderer/bridge/bridge-worker.ts): a script of this origin, nothing else.
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Sent with every answer, errors included: a 404 page is a page too. */
export function securityHeaders(port: number): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(port),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}

const NOT_BUILT =
  '<!doctype html><meta charset="utf-8"><title>Advent Agent</title>' +
  '<p>The Advent Agent UI is not built yet: run <code>npm run build</code>, then reload this page.</p>\n';

export interface StaticOptions {
  /** The folder with index.html and its assets (dist/renderer). */
  root: string;
  /** The port the page is served on, for its CSP. */
  port: number;
}

/** Answer one GET/HEAD request from `root`. */
export async function serveStatic(
  req: IncomingMessage,
  res: ServerResponse,
  { root, port }: StaticOptions,
): Promise<void> {
  const headers = securityHeaders(port);
  const plain = (status: number, text: string, extra: Record<string, string> = {}): void => {
    res.writeHead(status, {
      ...headers,
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'no-store',
      ...extra,
    });
    res.end(req.method === 'HEAD' ? undefined : `${text}\n`);
  };

  if (req.method !== 'GET' && req.method !== 'HEAD')
    return plain(405, 'method not allowed', { Allow: 'GET, HEAD' });

  const segments = pathSegments(req.url ?? '');
  if (!segments) return plain(404, 'not found');
  const isIndex = segments.length === 0;
  const file = await resolveInside(root, isIndex ? ['index.html'] : segments);

  if (!file) {
    if (!isIndex) return plain(404, 'not found');
    // Not built yet (or being rebuilt): say what to do instead of a bare 404.
    res.writeHead(503, {
      ...headers,
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : NOT_BUILT);
    return;
  }

  const type = CONTENT_TYPES[path.extname(file.path).toLowerCase()] ?? 'application/octet-stream';
  res.writeHead(200, {
    ...headers,
    'Content-Type': type,
    'Content-Length': String(file.size),
    // The page is rebuilt in place; hashed assets are not, but a local server makes caching moot.
    'Cache-Control': isIndex || file.path.endsWith('.html') ? 'no-store' : 'no-cache',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(file.path);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/**
 * The decoded path segments of a request target, or undefined when it tries to leave the folder,
 * names a dot-file, or is not a plain origin-form path. Checked on the raw target: a WHATWG URL
 * would quietly resolve `/../x` to `/x`, hiding the attempt.
 */
export function pathSegments(target: string): string[] | undefined {
  if (!target.startsWith('/')) return undefined;
  const raw = target.split(/[?#]/, 1)[0] ?? '';
  const segments: string[] = [];
  for (const part of raw.split('/').slice(1)) {
    let seg: string;
    try {
      seg = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    if (seg === '') continue;
    // Encoded separators, NUL, `.`/`..` and hidden files never name a file we serve.
    if (seg.startsWith('.') || /[/\\\0:]/.test(seg)) return undefined;
    segments.push(seg);
  }
  // `/assets/` is a folder: no listing, and no index.html fallback inside folders.
  if (segments.length > 0 && raw.endsWith('/')) return undefined;
  return segments;
}

/** A regular file under `root`, real path included (a symlink out of the folder does not count). */
async function resolveInside(
  root: string,
  segments: string[],
): Promise<{ path: string; size: number } | undefined> {
  try {
    const realRoot = await realpath(root);
    const real = await realpath(path.join(realRoot, ...segments));
    const rel = path.relative(realRoot, real);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
    const info = await stat(real);
    return info.isFile() ? { path: real, size: info.size } : undefined;
  } catch {
    return undefined;
  }
}
