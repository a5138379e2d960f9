import * as electronModule from 'electron';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CSP,
  contentTypeOf,
  createAppHandler,
  registerAppScheme,
  resolveInside,
  serveApp,
} from '../../../main/electron/protocol.js';
import type { FakeElectron } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));
const electron = electronModule as unknown as FakeElectron;

let tmp: string;
let root: string;
let handler: (request: Request) => Promise<Response>;

/** A request as Electron's protocol.handle gives it; the raw URL is kept (no normalisation). */
function get(url: string, method = 'GET'): Promise<Response> {
  return handler({ url, method } as Request);
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'advent-protocol-'));
  root = path.join(tmp, 'dist', 'renderer');
  await mkdir(path.join(root, 'assets'), { recursive: true });
  await writeFile(path.join(root, 'index.html'), '<!doctype html><title>Advent</title>');
  await writeFile(path.join(root, 'assets', 'app.js'), 'console.log(1)');
  await writeFile(path.join(tmp, 'dist', 'package.json'), '{"secret":"outside the renderer"}');
  await writeFile(path.join(tmp, 'package.json'), '{"secret":"outside the renderer"}');
  await symlink(path.join(tmp, 'package.json'), path.join(root, 'linked.json'));
  await symlink(tmp, path.join(root, 'up'));
  handler = createAppHandler(root);
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('app:// protocol', () => {
  it('registers a standard, secure scheme and serves it', () => {
    registerAppScheme();
    expect(electron.protocol.registerSchemesAsPrivileged).toHaveBeenCalledWith([
      expect.objectContaining({
        scheme: 'app',
        privileges: expect.objectContaining({ standard: true, secure: true }),
      }),
    ]);
    const privileges = electron.protocol.registerSchemesAsPrivileged.mock.calls[0]?.[0][0]
      .privileges as Record<string, unknown>;
    expect(privileges.bypassCSP).toBeFalsy();
    // protocol.md, CustomScheme privileges: codeCache "Enable V8 code cache for the scheme, only
    // works when standard is also set to true"; Session.setCodeCachePath: by default code cache is
    // only enabled for http(s) URLs.
    expect(privileges).toMatchObject({ codeCache: true, standard: true });
    serveApp(root);
    expect(electron.protocol.handle).toHaveBeenCalledWith('app', expect.any(Function));
  });

  it('serves index.html with the strict CSP header', async () => {
    for (const url of ['app://advent/index.html', 'app://advent/']) {
      const res = await get(url);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<title>Advent</title>');
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(CSP);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      // corsEnabled scheme, but no other origin may read our files.
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
    expect(CSP).toBe(
      "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; media-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    );
  });

  it('serves nested assets with their type', async () => {
    const res = await get('app://advent/assets/app.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(contentTypeOf('x.wasm')).toBe('application/wasm');
    expect(contentTypeOf('x.unknown')).toBe('application/octet-stream');
  });

  it.each([
    'app://advent/../package.json',
    'app://advent/../../package.json',
    'app://advent/%2e%2e/package.json',
    'app://advent/..%2Fpackage.json',
    'app://advent/..%2F..%2Fpackage.json',
    'app://advent/assets/..%2F..%2F..%2Fpackage.json',
    'app://advent/..%5Cpackage.json',
    'app://advent/%2Fetc%2Fpasswd',
    'app://advent/index.html%00.js',
    'app://advent/%E0%A4%A',
    'app://advent/linked.json',
    'app://advent/up/package.json',
    'app://advent/assets',
    'app://other/index.html',
    'app://user@advent/index.html',
    'file:///etc/passwd',
    'app://advent/missing.js',
  ])('refuses %s with a 404 that still carries the CSP', async (url) => {
    const res = await get(url);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('secret');
    expect(res.headers.get('content-security-policy')).toBe(CSP);
  });

  it('keeps every resolved file inside the folder', async () => {
    expect(await resolveInside(root, 'app://advent/../package.json')).toBeUndefined();
    expect(await resolveInside(root, 'app://advent/index.html')).toBe(
      path.join(await realpath(root), 'index.html'),
    );
  });

  it('answers only GET and HEAD', async () => {
    expect((await get('app://advent/index.html', 'POST')).status).toBe(405);
    const head = await get('app://advent/index.html', 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });
});
