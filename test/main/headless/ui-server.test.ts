import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../../../app/api.js';
import type { AssistantItem, ChatItem } from '../../../app/contract/chat.js';
import { REATTACH_GRACE_MS } from '../../../app/permissions/broker.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';
import {
  MAX_BRIDGE_SOCKETS,
  type UiServer,
  startUiServer,
} from '../../../main/headless/ui-server.js';
import { FAST } from '../../helpers/agent-harness.js';
import { nextEvent, until } from '../../helpers/wait.js';
import { type Page, httpGet, openPage, upgradeStatus } from './bridge-client.js';
import { startDemoServer } from '../../../sim/demo-server.js';

let dir: string;
let staticDir: string;
let api: CoreApi;
let server: UiServer;
let logs: string[];
const pages: Page[] = [];

async function openApi(): Promise<CoreApi> {
  return CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    host: 'browser',
    version: '0.0.0-test',
    timing: FAST,
    demo: startDemoServer,
  });
}

async function page(origin?: string): Promise<Page> {
  const p = await openPage({ port: server.port, token: server.token, origin });
  pages.push(p);
  return p;
}

const assistantSaid = (pattern: RegExp) => (item: ChatItem) =>
  item.kind === 'assistant' && item.state === 'done' && pattern.test(item.text);

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-ui-'));
  staticDir = path.join(dir, 'static');
  await mkdir(path.join(staticDir, 'assets'), { recursive: true });
  await writeFile(path.join(staticDir, 'index.html'), '<!doctype html><title>t</title>ok');
  await writeFile(path.join(staticDir, 'assets', 'app.js'), 'console.log(1)');
  await writeFile(path.join(staticDir, 'assets', 'app.css'), 'body{}');
  await writeFile(path.join(staticDir, '.secret'), 'hidden');
  // Beside the served folder: what a traversal would be after.
  await writeFile(path.join(dir, 'package.json'), '{"name":"outside"}');
  logs = [];
  api = await openApi();
  server = await startUiServer({ api, staticDir, log: (l) => logs.push(l) });
});

afterEach(async () => {
  await Promise.all(pages.splice(0).map((p) => p.close()));
  await server.close();
  await api.close();
  await rm(dir, { recursive: true, force: true });
});

describe('UI server: HTTP', () => {
  it('binds 127.0.0.1 only, and its URL carries a 64-hex-character token', () => {
    expect(server.address().address).toBe('127.0.0.1');
    expect(server.token).toMatch(/^[0-9a-f]{64}$/);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`);
  });

  it('serves index.html at / with the CSP, nosniff, no-referrer and no-store headers', async () => {
    const r = await httpGet(server.port, `/?token=${server.token}`);
    expect(r.status).toBe(200);
    expect(r.body).toContain('ok');
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['content-security-policy']).toBe(
      "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
        `connect-src 'self' ws://127.0.0.1:${server.port}; media-src 'self' blob:; worker-src 'self'; object-src 'none'; ` +
        "base-uri 'none'; frame-ancestors 'none'",
    );
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect(r.headers['cache-control']).toBe('no-store');
  });

  it('serves assets with their content types', async () => {
    const js = await httpGet(server.port, '/assets/app.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.body).toBe('console.log(1)');
    const css = await httpGet(server.port, '/assets/app.css');
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it.each([
    '/../package.json',
    '/%2e%2e/package.json',
    '/assets/..%2f..%2fpackage.json',
    '/assets/%2e%2e/%2e%2e/package.json',
    '/..%5cpackage.json',
    '/assets/',
    '/assets',
    '/.secret',
    '/missing.js',
    '/%E0%A4%A',
  ])('answers 404 for %s (traversal, folders, dot-files, missing)', async (target) => {
    const r = await httpGet(server.port, target);
    expect(r.status).toBe(404);
    expect(r.body).not.toContain('outside');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
  });

  it('does not follow a symlink out of the folder', async () => {
    await symlink(path.join(dir, 'package.json'), path.join(staticDir, 'link.json'));
    expect((await httpGet(server.port, '/link.json')).status).toBe(404);
  });

  it('refuses a foreign Host header with 403 (DNS rebinding), accepts localhost', async () => {
    const evil = await httpGet(server.port, '/', { Host: `evil.example:${server.port}` });
    expect(evil.status).toBe(403);
    expect(evil.body).not.toContain('ok');
    expect((await httpGet(server.port, '/', { Host: `127.0.0.1:1` })).status).toBe(403);
    expect((await httpGet(server.port, '/', { Host: `localhost:${server.port}` })).status).toBe(
      200,
    );
  });

  it('answers 503 with a one-line page saying to build when there is no index.html', async () => {
    const empty = await startUiServer({ api, staticDir: path.join(dir, 'nothing-here') });
    try {
      const r = await httpGet(empty.port, '/');
      expect(r.status).toBe(503);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.body).toMatch(/not built.*npm run build/);
      expect(r.body.trim().split('\n')).toHaveLength(1);
      expect((await httpGet(empty.port, '/assets/app.js')).status).toBe(404);
    } finally {
      await empty.close();
    }
  });
});

describe('UI server: the bridge handshake', () => {
  it('refuses a missing or wrong token, a foreign or missing Origin, and a wrong host with 403', async () => {
    const port = server.port;
    expect(await upgradeStatus({ port, token: null })).toBe(403);
    expect(await upgradeStatus({ port, token: '0'.repeat(64) })).toBe(403);
    expect(await upgradeStatus({ port, token: server.token.slice(1) })).toBe(403);
    expect(await upgradeStatus({ port, token: server.token, origin: 'http://evil.example' })).toBe(
      403,
    );
    expect(
      await upgradeStatus({ port, token: server.token, origin: `https://127.0.0.1:${port}` }),
    ).toBe(403);
    expect(await upgradeStatus({ port, token: server.token, origin: null })).toBe(403);
    expect(await upgradeStatus({ port, token: server.token, path: '/elsewhere' })).toBe(404);
  });

  it(`holds at most ${MAX_BRIDGE_SOCKETS} pages; one more is turned away until one closes`, async () => {
    const open: Page[] = [];
    for (let i = 0; i < MAX_BRIDGE_SOCKETS; i++) open.push(await page());
    expect(await upgradeStatus({ port: server.port, token: server.token })).toBe(503);
    await open[0]!.close();
    await until(() => open[0]!.ws.readyState === open[0]!.ws.CLOSED, 'the page closed');
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 101; attempt++) {
      status = await upgradeStatus({ port: server.port, token: server.token });
      if (status !== 101) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(101);
  });

  it('accepts the right token with the page origin (127.0.0.1 or localhost)', async () => {
    const port = server.port;
    expect(await upgradeStatus({ port, token: server.token })).toBe(101);
    expect(
      await upgradeStatus({ port, token: server.token, origin: `http://localhost:${port}` }),
    ).toBe(101);
  });
});

describe('UI server: calls and events over the bridge', () => {
  it('a snapshot call round-trips', async () => {
    const p = await page();
    const r = await p.call('snapshot');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const snap = r.value as { version: string; settings: { host: string } };
    expect(snap.version).toBe('0.0.0-test');
    expect(snap.settings.host).toBe('browser');
  });

  it("invalid arguments get invalid_args; an unknown method gets unknown_command; the core's refusal its own code", async () => {
    const p = await page();
    const bad = await p.call('sendText', 42);
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_args' } });
    if (!bad.ok) expect(bad.error.message).toMatch(/^sendText: invalid arguments/);
    expect(await p.call('eraseEverything')).toMatchObject({
      ok: false,
      error: { code: 'unknown_command', message: 'unknown command "eraseEverything"' },
    });
    expect(await p.call('constructor')).toMatchObject({
      ok: false,
      error: { code: 'unknown_command' },
    });
    expect(await p.call('sendText', 'hello')).toEqual({
      t: 'result',
      id: 4,
      ok: false,
      error: {
        code: 'no_active_connection',
        message: 'no connection is active; connect to a server first',
        params: {},
      },
    });
    expect(await p.call('voiceEnd')).toEqual({ t: 'result', id: 5, ok: true, value: null });
  });

  it('malformed JSON or an unknown message type closes that socket with 1003; others keep working', async () => {
    const a = await page();
    const b = await page();
    const c = await page();
    a.ws.send('{not json');
    expect(await a.closedWith()).toEqual({ code: 1003, reason: 'malformed JSON' });
    b.ws.send(JSON.stringify({ t: 'hello' }));
    expect(await b.closedWith()).toMatchObject({ code: 1003 });
    expect((await c.call('snapshot')).ok).toBe(true);
    expect((await httpGet(server.port, '/')).status).toBe(200);
  });

  it('messages that used to take the whole agent down close or answer only that socket', async () => {
    // A long non-ASCII message type: its close reason was cut by characters, not bytes, past
    // WebSocket's 123, and ws.close threw in the message handler.
    const a = await page();
    a.ws.send(JSON.stringify({ t: 'é'.repeat(100) }));
    expect(await a.closedWith()).toMatchObject({ code: 1003 });
    const long = await page();
    long.ws.send(JSON.stringify({ t: '字'.repeat(300_000) }));
    expect(await long.closedWith()).toMatchObject({ code: 1003 });
    // A method name nested 100 000 deep: quoting it back overflowed the stack outside the
    // server's try, and the rejected call was never caught.
    const b = await page();
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    b.ws.send(`{"t":"call","id":77,"method":${deep},"args":[]}`);
    await until(
      () => b.messages.some((m) => m.t === 'result' && m.id === 77),
      'the answer to the deep method',
    );
    expect(b.messages.find((m) => m.t === 'result' && m.id === 77)).toMatchObject({
      ok: false,
      error: { code: 'unknown_command', message: 'unknown command (a object)' },
    });
    // Still up, for these pages and others.
    expect((await b.call('snapshot')).ok).toBe(true);
    expect((await (await page()).call('snapshot')).ok).toBe(true);
  });

  it('a message over 1 MiB closes the socket (1009) instead of being read', async () => {
    const p = await page();
    p.ws.send('x'.repeat(1024 * 1024 + 1));
    expect((await p.closedWith()).code).toBe(1009);
  });

  it('a binary frame without a voice turn comes back as a notice to that page', async () => {
    const p = await page();
    p.ws.send(new Uint8Array(320), { binary: true });
    const n = await p.event('notice', (e) => /voice not sent/.test(e.message));
    expect(n.message).toMatch(/no voice turn is open/);
  });

  it('events reach the page: the demo answers a text turn with chat events and binary audio', async () => {
    const p = await page();
    expect(await p.call('startDemo')).toMatchObject({ ok: true, value: { id: 'demo' } });
    await p.event('connection', (c) => c.profile.id === 'demo' && c.state.status === 'ready');
    expect(await p.call('sendText', 'what time is it')).toMatchObject({ ok: true });
    await p.event('chat', (c) => c.kind === 'user' && c.text === 'what time is it');
    const reply = (await p.event('chat', assistantSaid(/^It's /))) as AssistantItem;
    expect(reply.taskId).toBeTruthy();
    await until(() => p.audio.length > 0, 'an audio frame');
    const audio = p.audio[0]!;
    expect(audio).toMatchObject({ connection: 'demo', sampleRate: 16_000, taskId: reply.taskId });
    expect(audio.pcm.byteLength).toBeGreaterThan(0);
    expect(p.events('audit').some((r) => r.service === 'get_current_time')).toBe(true);
  });

  it('a prompt raised while a page is attached is answered over the socket', async () => {
    const p = await page();
    await p.call('startDemo');
    await p.event('connection', (c) => c.profile.id === 'demo' && c.state.status === 'ready');
    await p.call('sendText', 'write a note: buy milk');
    const prompt = await p.event('prompt');
    expect(prompt.service).toBe('create_file');
    expect(await p.call('answerPrompt', prompt.id, 'once')).toMatchObject({
      ok: true,
      value: true,
    });
    await p.event('promptResolved', (r) => r.id === prompt.id && r.resolution === 'once');
    await p.event('chat', assistantSaid(/^Saved it/));
    const notes = await readdir(path.join(dir, 'files', 'notes'));
    expect(notes).toHaveLength(1);
  });

  it('when the last page closes and none comes back within the grace, its pending prompts are cancelled and the server hears no one could be asked', async () => {
    const a = await page();
    const b = await page();
    await a.call('startDemo');
    await a.event('connection', (c) => c.profile.id === 'demo' && c.state.status === 'ready');
    const replied = nextEvent(
      api.events,
      'chat',
      assistantSaid(/so I didn't save the note/),
      REATTACH_GRACE_MS + 5_000,
    );
    await a.call('sendText', 'write a note: buy milk');
    const prompt = await a.event('prompt');
    await b.event('prompt', (q) => q.id === prompt.id);
    await a.close();
    // One page is still there to answer: nothing is cancelled yet.
    await new Promise((r) => setTimeout(r, 50));
    expect(api.agent.broker.pending().map((q) => q.id)).toEqual([prompt.id]);
    await b.close();
    // A reloading page gets a moment to come back for it.
    await new Promise((r) => setTimeout(r, 50));
    expect(api.agent.broker.pending().map((q) => q.id)).toEqual([prompt.id]);
    const reply = (await replied) as AssistantItem;
    // The demo says it like a person: the sentence for the model stays in the record.
    expect(reply.text).toBe("No window was open to ask you, so I didn't save the note.");
    expect(api.agent.broker.pending()).toEqual([]);
    expect(api.agent.broker.hasAnswerer()).toBe(false);
  });

  it('drops reply audio for a page that is behind, logging it once, while other events still go', async () => {
    const slow = await startUiServer({
      api,
      staticDir,
      audioHighWaterBytes: -1,
      log: (l) => logs.push(l),
    });
    try {
      const p = await openPage({ port: slow.port, token: slow.token });
      pages.push(p);
      await p.call('startDemo');
      await p.event('connection', (c) => c.profile.id === 'demo' && c.state.status === 'ready');
      await p.call('sendText', 'what time is it');
      await p.event('chat', assistantSaid(/^It's /));
      await p.call('sendText', 'hello');
      await p.event('chat', assistantSaid(/^You said: hello/));
      expect(p.audio).toEqual([]);
      expect(logs.filter((l) => /dropping its reply audio/.test(l))).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });
});

describe('UI server: close', () => {
  it('closes every socket with 1001, detaches every page and leaves nothing listening', async () => {
    const a = await page();
    const b = await page();
    expect(api.agent.broker.answererNames()).toEqual(['browser', 'browser']);
    await server.close();
    expect((await a.closedWith()).code).toBe(1001);
    expect((await b.closedWith()).code).toBe(1001);
    expect(api.agent.broker.hasAnswerer()).toBe(false);
    const refused = await new Promise<string>((resolve) => {
      const s = connect(server.port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    expect(refused).toBe('ECONNREFUSED');
    await server.close(); // twice is fine
  });

  it('leaves no handles: the process is back to the sockets it had before', async () => {
    await server.close();
    const tcp = (): number =>
      process
        .getActiveResourcesInfo()
        .filter((r) => r === 'TCPServerWrap' || r === 'TCPSocketWrap' || r === 'TCPWrap').length;
    const before = tcp();
    const s = await startUiServer({ api, staticDir });
    const p = await openPage({ port: s.port, token: s.token });
    await p.call('snapshot');
    await httpGet(s.port, '/');
    expect(tcp()).toBeGreaterThan(before);
    await s.close();
    expect((await p.closedWith()).code).toBe(1001);
    // Sockets still closing from earlier requests may be counted in `before`, never more.
    await until(() => tcp() <= before, 'every socket to close');
  });
});
