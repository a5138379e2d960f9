/**
 * The `app://advent/` scheme: serves the built renderer (dist/renderer) and nothing else, with a
 * strict Content-Security-Policy on every response. A custom privileged scheme instead of file://
 * gives the page a real origin of its own, which the IPC, navigation and permission guards check.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { protocol } from 'electron';
import { APP_HOST, APP_SCHEME } from './origin.js';

/**
 * Headers on every response of our scheme. Written in Electron's webRequest shape (name → values)
 * and with the policy as a literal, the form Electronegativity recognises, so its CSP check sees
 * the policy we really send instead of reporting "no CSP".
 */
export const SECURITY_HEADERS = Object.freeze({
  responseHeaders: {
    'Content-Security-Policy': [
      "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; media-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    ],
    'X-Content-Type-Options': ['nosniff'],
    'Referrer-Policy': ['no-referrer'],
    'Cross-Origin-Opener-Policy': ['same-origin'],
    'Cache-Control': ['no-cache'],
  },
});

export const CSP: string = SECURITY_HEADERS.responseHeaders['Content-Security-Policy'].join('; ');

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
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
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.txt': 'text/plain; charset=utf-8',
};

export function contentTypeOf(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Must run before the app is ready: a standard, secure scheme gets an origin, storage and fetch.
 * corsEnabled lets Vite's `<script type="module" crossorigin>` load; our responses carry no
 * Access-Control-Allow-Origin, so no other origin can read them. CSP is never bypassed. codeCache
 * lets V8 keep the compiled renderer bundle between launches (Chromium caches code only for
 * http(s) unless a standard scheme asks for it); without it ~1 MB of JS is compiled every start.
 */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    {
      scheme: APP_SCHEME,
      privileges: {
        standard: true,
        secure: true,
        supportFetchAPI: true,
        corsEnabled: true,
        stream: true,
        codeCache: true,
        bypassCSP: false,
      },
    },
  ]);
}

/** After ready: answer `app://advent/…` from `rootDir`. */
export function serveApp(rootDir: string): void {
  protocol.handle(APP_SCHEME, createAppHandler(rootDir));
}

function reply(status: number, body: Uint8Array | string | null, type?: string): Response {
  const headers = new Headers();
  for (const [name, values] of Object.entries(SECURITY_HEADERS.responseHeaders))
    headers.set(name, values.join(', '));
  if (type) headers.set('Content-Type', type);
  return new Response(body, { status, headers });
}

/**
 * The file a request may read, or undefined. Containment is checked twice: on the lexical path
 * (`path.relative`, never string prefixes) and again after resolving symlinks, so neither `..`
 * in any encoding nor a link inside the folder can reach a file outside it.
 */
export async function resolveInside(root: string, url: string): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== `${APP_SCHEME}:` || parsed.host !== APP_HOST) return undefined;
  if (parsed.username || parsed.password) return undefined;
  let relative: string;
  try {
    relative = decodeURIComponent(parsed.pathname);
  } catch {
    return undefined;
  }
  // Backslashes are separators on Windows and NUL ends C strings: neither belongs in our URLs.
  if (relative.includes('\\') || relative.includes('\0')) return undefined;
  if (relative === '/' || relative === '') relative = '/index.html';

  const base = path.resolve(root);
  const target = path.join(base, ...relative.split('/'));
  if (!isInside(base, target)) return undefined;
  try {
    const [realBase, realTarget] = await Promise.all([realpath(base), realpath(target)]);
    if (!isInside(realBase, realTarget)) return undefined;
    if (!(await stat(realTarget)).isFile()) return undefined;
    return realTarget;
  } catch {
    return undefined;
  }
}

function isInside(base: string, target: string): boolean {
  const rel = path.relative(base, target);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

export function createAppHandler(rootDir: string): (request: Request) => Promise<Response> {
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return reply(405, 'Method not allowed', 'text/plain; charset=utf-8');
    const file = await resolveInside(rootDir, request.url);
    if (!file) return reply(404, 'Not found', 'text/plain; charset=utf-8');
    let body: Uint8Array;
    try {
      body = await readFile(file);
    } catch {
      return reply(404, 'Not found', 'text/plain; charset=utf-8');
    }
    return reply(200, request.method === 'HEAD' ? null : body, contentTypeOf(file));
  };
}
