import * as logModule from 'electron-log/main';
import { describe, expect, it, vi } from 'vitest';
import * as electronModule from 'electron';
import {
  ELECTRON_LOG_CHANNEL,
  REDACTED,
  redact,
  redactValue,
  setupLog,
} from '../../../main/electron/log.js';
import type { FakeElectron, fakeElectronLog } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));
vi.mock('electron-log/main', () => import('./fake-electron.js').then((m) => m.fakeElectronLog()));
const fakeLog = logModule as unknown as ReturnType<typeof fakeElectronLog>;
const electron = electronModule as unknown as FakeElectron;

// A JWT-shaped string built at run time (no token-looking literal in the repo).
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const JWT = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: '1234567890', name: 'Ann' })}.${'s'.repeat(43)}`;

describe('redact', () => {
  it.each([
    [`auth failed for ${JWT} (expired)`, JWT],
    [`wss://host/ws?device=1&token=abc123secret&x=2`, 'abc123secret'],
    ['GET /ws?access_token=zzzTOPzzz HTTP/1.1', 'zzzTOPzzz'],
    ['Authorization: Bearer abc.def-ghi_123', 'abc.def-ghi_123'],
    ['authorization: Basic dXNlcjpwYXNz', 'dXNlcjpwYXNz'],
    ['{"token":"s3cr3t-value","host":"x"}', 's3cr3t-value'],
    ["config { password: 'hunter2' }", 'hunter2'],
    ['api_key=AKIA1234567890 region=eu', 'AKIA1234567890'],
    ['client_secret: shh-its-secret', 'shh-its-secret'],
    [
      'opaque aaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbb.cccccccccccccccccccccccc here',
      'aaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbb',
    ],
  ])('masks the secret in %s', (text, secret) => {
    const out = redact(text);
    expect(out).not.toContain(secret);
    expect(out).toContain(REDACTED);
  });

  it('keeps ordinary text intact', () => {
    for (const text of [
      'connected to 127.0.0.1:8765 as demo',
      'registered 3 services at 12:03',
      'file saved to /srv/u/Documents/Advent Agent/notes.txt',
      'api.example.com responded 200',
      'version 1.2.3',
    ])
      expect(redact(text)).toBe(text);
  });

  it('keeps the structure around a masked value', () => {
    expect(redact('wss://h/ws?token=abc&device=7')).toBe(`wss://h/ws?token=${REDACTED}&device=7`);
    expect(redact('Bearer abc')).toBe(`Bearer ${REDACTED}`);
  });
});

describe('redactValue', () => {
  it('masks secret-named keys at any depth and redacts strings', () => {
    const out = redactValue({
      host: 'example.com',
      token: 'plain-token',
      nested: { Authorization: 'Bearer x', password: 'p', list: [{ apiKey: 'k' }, `jwt ${JWT}`] },
      count: 3,
    });
    expect(out).toEqual({
      host: 'example.com',
      token: REDACTED,
      nested: {
        Authorization: REDACTED,
        password: REDACTED,
        list: [{ apiKey: REDACTED }, `jwt ${REDACTED}`],
      },
      count: 3,
    });
  });

  it('redacts errors, maps, buffers and cycles without throwing', () => {
    const err = new Error(`login failed with token=${'t0ps3cret'}`);
    const redactedErr = redactValue(err) as Error;
    expect(redactedErr).toBeInstanceOf(Error);
    expect(redactedErr.message).not.toContain('t0ps3cret');
    expect(redactedErr.stack ?? '').not.toContain('t0ps3cret');
    expect(redactValue(new Map([['secret', 'x']]))).toEqual(new Map([['secret', REDACTED]]));
    expect(redactValue(new Uint8Array(10))).toBe('[binary 10 bytes]');
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(redactValue(cyclic)).toEqual({ a: 1, self: '[Circular]' });
  });
});

describe('setupLog', () => {
  it('configures file and console and redacts everything logged', () => {
    const log = setupLog({ logDir: '/logs' });
    expect(fakeLog.transports.file.level).toBe('info');
    expect(typeof fakeLog.transports.file.resolvePathFn).toBe('function');
    expect((fakeLog.transports.file.resolvePathFn as () => string)()).toBe('/logs/main.log');
    expect(fakeLog.transports.console.level).not.toBe(false);
    log.warn('connect failed', { url: 'wss://h?token=abc', token: 'xyz' }, `bad ${JWT}`);
    const written = JSON.stringify(fakeLog.written);
    expect(written).not.toContain('abc');
    expect(written).not.toContain('xyz');
    expect(written).not.toContain(JWT);
    expect(written).toContain('connect failed');
  });

  it('turns off the IPC transport and removes electron-log’s unchecked channel', () => {
    // What importing electron-log/main does (src/main/index.js: externalApi.onIpc and
    // onIpcInvoke on '__ELECTRON_LOG__'), and its IPC transport's level in development.
    electron.ipcMain.on(ELECTRON_LOG_CHANNEL, () => undefined);
    electron.ipcMain.handle(ELECTRON_LOG_CHANNEL, () => undefined);
    fakeLog.transports.ipc.level = 'silly';
    setupLog({ logDir: '/logs' });
    expect(fakeLog.transports.ipc.level).toBe(false);
    expect(electron.ipcMain.listeners.has(ELECTRON_LOG_CHANNEL)).toBe(false);
    expect(electron.ipcMain.handlers.has(ELECTRON_LOG_CHANNEL)).toBe(false);
  });
});
