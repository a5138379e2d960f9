import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Service } from '../../../app/services/service.js';
import {
  MAX_NAME_CHARS,
  MAX_OPEN_REPLIES,
  MAX_REPLY_CHARS,
  MAX_STATUS_CHARS,
} from '../../../app/wire/kit/bounds.js';
import { FrameType, taskKey } from '../../../app/wire/advent/frame.js';
import { FAST, type Harness, UNPACED, startHarness } from '../../helpers/agent-harness.js';
import { fakeJwt, nextEvent, until } from '../../helpers/wait.js';
import { BUILTIN_NAMES, builtinsWithout } from '../../helpers/builtins.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const registeredNames = (h: Harness) => h.sim.registrations().map((s) => Object.keys(s).sort());

describe('Advent session: login and registration', () => {
  it('sends AUTH first with every parameter the user set, then registers every enabled service', async () => {
    h = await startHarness({
      profile: {
        voiceId: 'Chinese (Mandarin)_Wise_Women',
        lang: 'zh',
        format: 'pcm',
        mode: 'manual',
        emojiMode: 'true',
      },
      token: 'tok-123',
    });
    const first = h.sim.received[0]!;
    expect(first.type).toBe(FrameType.AUTH);
    expect(first.taskId).toBe('00000000');
    expect(h.sim.lastAuth()).toEqual({
      token: 'tok-123',
      params: {
        voiceid: 'Chinese (Mandarin)_Wise_Women',
        lang: 'zh',
        format: 'pcm',
        mode: 'manual',
        emoji_mode: 'true',
      },
    });
    await until(() => h!.sim.registrations().length === 1, 'register');
    expect(registeredNames(h)).toEqual([[...BUILTIN_NAMES].sort()]);
    const getTime = h.sim.registrations()[0]!.get_current_time as { parameters: { type: string } };
    expect(getTime.parameters.type).toBe('object');
    expect(h.sim.violations).toEqual([]);
  });

  it('shows an auth failure with the server text and does not retry a refused token', async () => {
    h = await startHarness({
      sim: { auth: { reject: '##ERROR:invalid token' } },
      waitReady: false,
    });
    const offline = await h.reached((s) => s.status === 'offline');
    expect(offline).toMatchObject({ status: 'offline', reason: 'auth_failed' });
    expect(offline.status === 'offline' && offline.message).toContain('##ERROR:invalid token');
    await new Promise((r) => setTimeout(r, 150));
    expect(h.sim.connections).toBe(1);
  });

  it('shows a bounded start of a huge login refusal, not the whole of it', async () => {
    // The message stays in the connection's state, shown and logged; a server chose its size.
    const refusal = `##ERROR:invalid token ${'x'.repeat(1_000_000)}`;
    h = await startHarness({ sim: { auth: { reject: refusal } }, waitReady: false });
    const offline = await h.reached((s) => s.status === 'offline');
    expect(offline).toMatchObject({ reason: 'auth_failed' });
    const message = offline.status === 'offline' ? offline.message : '';
    expect(message).toContain('##ERROR:invalid token xxx');
    expect(message.length).toBeLessThan(MAX_STATUS_CHARS + 100);
  });

  it('treats a hang-up right after AUTH as a login failure', async () => {
    h = await startHarness({ sim: { auth: 'silent-close' }, waitReady: false });
    const offline = await h.reached((s) => s.status === 'offline');
    expect(offline).toMatchObject({ reason: 'auth_failed' });
    expect(offline.status === 'offline' && offline.message).toMatch(
      /token may be invalid or expired/,
    );
  });

  it('does not connect with an expired token, and says so', async () => {
    const expired = fakeJwt({ exp: Math.floor(Date.now() / 1000) - 60 });
    h = await startHarness({ token: expired, waitReady: false });
    const offline = await h.reached((s) => s.status === 'offline');
    expect(offline).toMatchObject({ reason: 'token_expired' });
    expect(h.sim.connections).toBe(0);
  });

  it('warns before the token expires', async () => {
    const soon = fakeJwt({ exp: Math.floor(Date.now() / 1000) + 60 });
    const notices: string[] = [];
    h = await startHarness({ token: soon, waitReady: false });
    h.agent.events.on('notice', (n) => notices.push(n.message));
    await until(() => notices.some((n) => /expires at/.test(n)), 'expiry warning');
  });

  it('re-registers the whole set when a service is switched off, and a later call gets "disabled"', async () => {
    h = await startHarness();
    await until(() => h!.sim.registrations().length === 1, 'first register');
    await h.agent.setServiceEnabled('create_file', false);
    await until(() => h!.sim.registrations().length === 2, 'second register');
    expect(registeredNames(h)[1]).toEqual(builtinsWithout('create_file').sort());
    const result = await h.sim.peer().call('create_file', { filename: 'a.txt', content: 'x' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/switched off by the user/);
    expect(existsSync(path.join(h.filesRoot, 'a.txt'))).toBe(false);
    const audit = await h.agent.queryAudit({ service: 'create_file' });
    expect(audit.records[0]).toMatchObject({
      decision: 'disabled',
      outcome: 'refused',
      error: 'disabled',
    });
  });
});

describe('Advent session: text turns', () => {
  it('sends TEXT then END_FRAME under a fresh 8-character task id and assembles the streamed reply', async () => {
    h = await startHarness({ sim: { splitUtf8: true } });
    h.sim.onTurn(async (turn, peer) => {
      await peer.text(turn.taskId, ['现在是', '下午三点，', 'all good ✓']);
      await peer.emoji(turn.taskId, 'happy');
      await peer.audio(turn.taskId, Buffer.alloc(1001, 1), 333);
      await peer.end(turn.taskId);
    });
    const deltas: string[] = [];
    h.agent.events.on('replyDelta', (d) => deltas.push(d.text));
    let audioBytes = 0;
    h.agent.events.on('audio', (a) => {
      expect(a.data.length % 2).toBe(0);
      audioBytes += a.data.length;
    });
    const mood = nextEvent(h.agent.events, 'mood');
    const done = nextEvent(h.agent.events, 'replyDone');
    const sent = h.session.sendText('what time is it?');
    expect(sent.ok).toBe(true);
    const reply = await done;
    expect(reply.text).toBe('现在是下午三点，all good ✓');
    expect(deltas.join('')).toBe(reply.text);
    expect((await mood).emoji).toBe('happy');
    expect(audioBytes).toBe(1000);

    const frames = h.sim.received.filter(
      (f) => f.type === FrameType.TEXT || f.type === FrameType.END,
    );
    expect(frames.map((f) => [f.type, f.seq, f.text])).toEqual([
      [FrameType.TEXT, 0, 'what time is it?'],
      [FrameType.END, 1, ''],
    ]);
    expect(frames[0]!.taskId).toMatch(/^[0-9a-f]{8}$/);
    expect(frames[1]!.taskId).toBe(frames[0]!.taskId);
  });

  it('shows a bounded mood for a huge EMOJI frame', async () => {
    // Every mood stays in the timeline (500 items): 4 MiB each held gigabytes.
    h = await startHarness();
    h.sim.onTurn(async (turn, peer) => {
      await peer.emoji(turn.taskId, `😀${'z'.repeat(1_000_000)}`);
      await peer.end(turn.taskId);
    });
    const mood = nextEvent(h.agent.events, 'mood');
    expect(h.session.sendText('how do you feel?').ok).toBe(true);
    const { emoji } = await mood;
    expect(emoji.startsWith('😀zzz')).toBe(true);
    expect(emoji.length).toBeLessThan(MAX_NAME_CHARS + 32);
  });

  it('drops late frames of a superseded turn but always delivers system frames', async () => {
    h = await startHarness();
    const turns: string[] = [];
    h.sim.onTurn((turn) => {
      turns.push(turn.taskId);
    });
    const first = h.session.sendText('first');
    const second = h.session.sendText('second');
    if (!first.ok || !second.ok) throw new Error('not sent');
    await until(() => turns.length === 2, 'two turns');
    const deltas: { taskId: string; text: string }[] = [];
    h.agent.events.on('replyDelta', (d) => deltas.push(d));
    const statuses: string[] = [];
    h.agent.events.on('status', (s) => statuses.push(s.text));
    const peer = h.sim.peer();
    await peer.text(first.taskId, ['stale']);
    await peer.status('##INFO:system note');
    await peer.text(second.taskId, ['fresh']);
    const done = nextEvent(h.agent.events, 'replyDone');
    await peer.end(second.taskId);
    expect((await done).text).toBe('fresh');
    expect(deltas.map((d) => d.text)).toEqual(['fresh']);
    expect(statuses).toContain('##INFO:system note');
  });

  it('a turn started the moment the last reply ends does not report that reply as cut off', async () => {
    // Piped lines in the terminal: the next one goes out from inside the replyDone listener.
    h = await startHarness();
    const first = h.session.sendText('one');
    if (!first.ok) throw new Error(first.message);
    const interrupted: string[] = [];
    h.agent.events.on('replyInterrupted', (e) => void interrupted.push(e.taskId));
    let second: string | undefined;
    h.agent.events.on('replyDone', () => {
      const next = h!.session.sendText('two');
      if (next.ok) second ??= next.taskId;
    });
    const done = nextEvent(h.agent.events, 'replyDone');
    const peer = h.sim.peer();
    await peer.text(first.taskId, ['reply one']);
    await peer.end(first.taskId);
    expect((await done).text).toBe('reply one');
    await until(() => second !== undefined, 'the next turn sent');
    expect(interrupted).toEqual([]);
  });

  it('SPEAK sends the text for the character to say verbatim under a fresh task', async () => {
    h = await startHarness();
    const sent = h.session.speak('你好，欢迎！');
    expect(sent.ok).toBe(true);
    const frame = await h.sim.waitFor((f) => f.type === FrameType.SPEAK);
    expect(frame.text).toBe('你好，欢迎！');
    expect(sent.ok && frame.taskId).toBe(sent.ok && sent.taskId);
  });

  it('keeps a typed ##END from cutting the frame short', async () => {
    h = await startHarness();
    h.session.sendText('what does ##END mean?');
    const frame = await h.sim.waitFor((f) => f.type === FrameType.TEXT);
    expect(frame.text).toBe('what does ##\u200BEND mean?');
    expect(h.sim.violations).toEqual([]);
  });

  it('refuses to send when not connected, with the reason', async () => {
    h = await startHarness();
    await h.sim.stop();
    await nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'reconnecting');
    const sent = h.session.sendText('hello?');
    expect(sent).toMatchObject({ ok: false });
    expect(!sent.ok && sent.message).toMatch(/not connected/);
  });
});

describe('Advent session: MCP calls through the gate', () => {
  it('answers an auto-allowed read call with data and audits it', async () => {
    h = await startHarness();
    const result = await h.sim
      .peer()
      .call('get_current_time', { format: 'simple' }, { callId: 'call_001' });
    expect(result).toMatchObject({ success: true });
    expect(String(result.data)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const resultFrame = h.sim.received.find(
      (f) => f.type === FrameType.MCP && (f.json as { type?: string })?.type === 'result',
    )!;
    expect(taskKey(resultFrame.taskId)).toBe('mcp00001');
    expect((resultFrame.json as { data: { call_id: string } }).data.call_id).toBe('call_001');
    await h.agent.audit.flush();
    const audit = await h.agent.queryAudit({});
    expect(audit.records[0]).toMatchObject({
      service: 'get_current_time',
      decision: 'auto',
      outcome: 'ok',
      connection: 'Test server',
      dialect: 'advent',
      callId: 'call_001',
    });
  });

  it('answers on the task id the call came on', async () => {
    h = await startHarness();
    await h.sim.peer().call('get_current_time', {}, { taskId: 'task1234' });
    const result = h.sim.received.find(
      (f) => f.type === FrameType.MCP && (f.json as { type?: string })?.type === 'result',
    )!;
    expect(result.taskId).toBe('task1234');
  });

  it('denies a write call at once when no one can be asked, telling the model why', async () => {
    h = await startHarness();
    const result = await h.sim
      .peer()
      .call('create_file', { filename: 'notes/todo.txt', content: 'milk' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/needs the user's permission and no one could be asked/);
    expect(existsSync(path.join(h.filesRoot, 'notes/todo.txt'))).toBe(false);
  });

  it('asks the user; "allow once" writes the file and the audit says allowed-once', async () => {
    h = await startHarness();
    const detach = h.agent.broker.attach({ name: 'test-ui' });
    const prompted = nextEvent(h.agent.events, 'prompt');
    const call = h.sim
      .peer()
      .call('create_file', { filename: 'notes/todo.txt', content: 'buy milk' });
    const prompt = await prompted;
    expect(prompt.summary).toMatch(/^Create file notes[/\\]todo\.txt \(8 B\) in /);
    expect(prompt.resolvedPaths).toEqual([path.join(h.filesRoot, 'notes', 'todo.txt')]);
    expect(prompt.connection).toEqual({ id: 'p1', name: 'Test server' });
    h.agent.answerPrompt(prompt.id, 'once');
    expect(await call).toMatchObject({ success: true });
    expect(await readFile(path.join(h.filesRoot, 'notes', 'todo.txt'), 'utf8')).toBe('buy milk');
    await h.agent.audit.flush();
    expect((await h.agent.queryAudit({ service: 'create_file' })).records[0]).toMatchObject({
      decision: 'allowed-once',
      outcome: 'ok',
    });
    detach();
  });

  it('"deny" tells the server it was declined and writes nothing', async () => {
    h = await startHarness();
    h.agent.broker.attach({ name: 'test-ui' });
    h.agent.events.on('prompt', (p) => h!.agent.answerPrompt(p.id, 'deny'));
    const result = await h.sim.peer().call('create_file', { filename: 'x.txt', content: 'no' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/declined/);
    expect(existsSync(path.join(h.filesRoot, 'x.txt'))).toBe(false);
  });

  it('denies when the user does not answer in time', async () => {
    h = await startHarness({ agent: { overrides: { promptTimeoutSec: 0.2 } } });
    h.agent.broker.attach({ name: 'test-ui' });
    const result = await h.sim.peer().call('create_file', { filename: 'late.txt', content: 'x' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/did not answer the permission request/);
    await h.agent.audit.flush();
    expect((await h.agent.queryAudit({ service: 'create_file' })).records[0]).toMatchObject({
      decision: 'timeout',
      error: 'prompt_timeout',
    });
  });

  it('"always allow" skips the prompt next time; revoking brings it back', async () => {
    h = await startHarness();
    h.agent.broker.attach({ name: 'test-ui' });
    let prompts = 0;
    h.agent.events.on('prompt', (p) => {
      prompts += 1;
      h!.agent.answerPrompt(p.id, 'always');
    });
    const peer = h.sim.peer();
    expect(await peer.call('create_file', { filename: 'a.txt', content: '1' })).toMatchObject({
      success: true,
    });
    expect(await peer.call('create_file', { filename: 'b.txt', content: '2' })).toMatchObject({
      success: true,
    });
    expect(prompts).toBe(1);
    expect(h.agent.getSettings().alwaysGrants).toContain('create_file');
    await h.agent.revokeGrants('create_file');
    expect(await peer.call('create_file', { filename: 'c.txt', content: '3' })).toMatchObject({
      success: true,
    });
    expect(prompts).toBe(2);
  });

  it('asks again before replacing an existing file, even when creating is always allowed', async () => {
    h = await startHarness({ agent: { overrides: { policies: { create_file: 'allow' } } } });
    h.agent.broker.attach({ name: 'test-ui' });
    const peer = h.sim.peer();
    expect(await peer.call('create_file', { filename: 'keep.txt', content: 'v1' })).toMatchObject({
      success: true,
    });
    const refused = await peer.call('create_file', { filename: 'keep.txt', content: 'v2' });
    expect(refused.error).toMatch(/already exists; call again with overwrite: true/);
    const prompted = nextEvent(h.agent.events, 'prompt');
    const replace = peer.call('create_file', {
      filename: 'keep.txt',
      content: 'v2',
      overwrite: true,
    });
    const prompt = await prompted;
    expect(prompt.summary).toMatch(/^Replace file keep\.txt/);
    expect(prompt.grantKey).toBe('create_file:overwrite');
    h.agent.answerPrompt(prompt.id, 'once');
    expect(await replace).toMatchObject({ success: true });
    expect(await readFile(path.join(h.filesRoot, 'keep.txt'), 'utf8')).toBe('v2');
  });

  it('refuses unknown services, invalid params and paths outside the folders with clear messages', async () => {
    h = await startHarness({ agent: { overrides: { policies: { create_file: 'allow' } } } });
    const peer = h.sim.peer();
    const unknown = await peer.call('delete_everything', {});
    expect(unknown.error).toContain(
      `no service named 'delete_everything'; available services: ${BUILTIN_NAMES.join(', ')}`,
    );
    const invalid = await peer.call('create_file', { filename: 'a.txt' });
    expect(invalid.error).toMatch(/parameter 'content' is required/);
    const badEnum = await peer.call('get_current_time', { format: 'long' });
    expect(badEnum.error).toMatch(/parameter 'format' must be one of: simple, detailed/);
    const escape = await peer.call('create_file', { filename: '../../etc/evil', content: 'x' });
    expect(escape.error).toMatch(/outside the allowed folders/);
    expect(h.sim.violations).toEqual([]);
  });

  it('runs many concurrent calls and answers each call_id exactly once', async () => {
    h = await startHarness();
    const calls = Array.from({ length: 40 }, (_, i) => ({
      method: 'get_current_time',
      params: { format: i % 2 ? 'simple' : 'detailed' },
      callId: `c${i}`,
    }));
    const results = await h.sim.peer().callMany(calls);
    expect(results.every((r) => r.success)).toBe(true);
    const resultIds = h.sim.received
      .filter((f) => f.type === FrameType.MCP && (f.json as { type?: string })?.type === 'result')
      .map((f) => (f.json as { data: { call_id: string } }).data.call_id);
    expect(resultIds.sort()).toEqual(calls.map((c) => c.callId).sort());
    expect(h.sim.violations).toEqual([]);
  });

  it('never runs a repeated call_id twice', async () => {
    h = await startHarness({ agent: { overrides: { policies: { create_file: 'allow' } } } });
    let runs = 0;
    h.agent.events.on('callFinished', () => (runs += 1));
    const peer = h.sim.peer();
    const body = JSON.stringify({
      type: 'call',
      data: {
        call_id: 'dup1',
        method: 'create_file',
        params: { filename: 'once.txt', content: 'x' },
      },
    });
    await peer.frame(FrameType.MCP, 'mcp00001', body, 0);
    await peer.frame(FrameType.MCP, 'mcp00001', body, 0);
    await until(() => runs >= 1, 'one run');
    await new Promise((r) => setTimeout(r, 100));
    expect(runs).toBe(1);
    expect(await readFile(path.join(h.filesRoot, 'once.txt'), 'utf8')).toBe('x');
  });

  it('answers a malformed call with success:false and survives junk MCP frames', async () => {
    h = await startHarness();
    const peer = h.sim.peer();
    await peer.frame(FrameType.MCP, 'mcp00001', '{not json', 0);
    await peer.frame(
      FrameType.MCP,
      'mcp00001',
      JSON.stringify({ type: 'call', data: { call_id: 'm1' } }),
      0,
    );
    const answer = await h.sim.waitFor(
      (f) => f.type === FrameType.MCP && (f.json as { type?: string })?.type === 'result',
    );
    expect(
      (answer.json as { data: { result: { success: boolean; error: string } } }).data.result,
    ).toEqual({
      success: false,
      error: "the call has no 'method' naming the service",
    });
    expect(await peer.call('get_current_time', {})).toMatchObject({ success: true });
  });
});

describe('Advent session: keeping the link', () => {
  it('reconnects after the server drops the link, then registers again', async () => {
    h = await startHarness();
    await until(() => h!.sim.registrations().length === 1, 'register');
    await h.sim.peer().drop();
    await nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'reconnecting');
    await nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'ready');
    await until(() => h!.sim.registrations().length === 2, 're-register');
    expect(h.sim.connections).toBe(2);
    expect(await h.sim.peer().call('get_current_time', {})).toMatchObject({ success: true });
  });

  it('backs off between failed attempts with growing, capped delays', async () => {
    h = await startHarness();
    const port = h.sim.port;
    await h.sim.stop();
    const delays: number[] = [];
    const off = h.agent.events.on('connection', ({ state }) => {
      if (state.status === 'reconnecting') delays.push(state.nextAt - Date.now());
    });
    await until(() => delays.length >= 6, 'six retries', 8000);
    off();
    expect(port).toBeGreaterThan(0);
    // 20 ms doubling, capped at 200 ms, ±25 % jitter.
    expect(delays[0]!).toBeLessThan(60);
    expect(Math.max(...delays)).toBeLessThanOrEqual(260);
    expect(delays[5]!).toBeGreaterThan(delays[0]!);
  });

  it('starts backoff from the beginning again after a healthy period', async () => {
    h = await startHarness({
      agent: { timing: { authGraceMs: 20, backoffInitialMs: 10, healthyResetMs: 150 } },
    });
    const attempts: number[] = [];
    h.agent.events.on('connection', ({ state }) => {
      if (state.status === 'reconnecting') attempts.push(state.attempt);
    });
    const dropAndRecover = async () => {
      await h!.sim.peer().drop();
      await nextEvent(h!.agent.events, 'connection', (e) => e.state.status === 'ready');
    };
    await dropAndRecover();
    await dropAndRecover();
    await new Promise((r) => setTimeout(r, 250));
    await dropAndRecover();
    expect(attempts).toEqual([2, 3, 1]);
  });

  it('sends ##PING after a quiet spell and stays up', async () => {
    h = await startHarness({
      agent: { timing: { authGraceMs: 30, pingIdleMs: 80, pongTimeoutMs: 1000 } },
    });
    await h.sim.waitFor((f) => f.type === FrameType.STATUS && f.text === '##PING');
    expect(h.session.state.status).toBe('ready');
  });

  it('reconnects when a ping gets no answer at all', async () => {
    // 'ignore' models a hung server: it reads everything and answers nothing, not even PONG.
    h = await startHarness({
      sim: { auth: 'ignore' },
      agent: {
        timing: { authGraceMs: 30, pingIdleMs: 60, pongTimeoutMs: 80, backoffInitialMs: 10 },
      },
    });
    await h.reached((s) => s.status === 'reconnecting' && /heartbeat/.test(s.lastError));
  });

  it('stop() says goodbye with ##DISCONNECT and leaves no timer or socket behind', async () => {
    h = await startHarness();
    await h.session.stop();
    const bye = h.sim.received.find(
      (f) => f.type === FrameType.STATUS && f.text === '##DISCONNECT',
    );
    expect(bye).toBeDefined();
    expect(h.session.connection.pendingTimers).toBe(0);
    expect(h.session.state).toMatchObject({ status: 'offline', reason: 'stopped' });
    await until(() => h!.sim.openConnections === 0, 'server side closed');
  });
});

describe('Advent session: hostile server', () => {
  it('decodes replies written one byte at a time', async () => {
    h = await startHarness({ sim: { writeMode: 'one-byte' } });
    h.sim.onTurn(async (turn, peer) => {
      await peer.text(turn.taskId, ['slow ', 'but ', '完整']);
      await peer.end(turn.taskId);
    });
    const done = nextEvent(h.agent.events, 'replyDone');
    h.session.sendText('hi');
    expect((await done).text).toBe('slow but 完整');
  });

  it('skips garbage between frames and unknown frame types, losing no reply text', async () => {
    h = await startHarness({ sim: { garbageBetweenFrames: true } });
    const notices: string[] = [];
    h.agent.events.on('notice', (n) => notices.push(n.message));
    h.sim.onTurn(async (turn, peer) => {
      await peer.text(turn.taskId, ['one ', 'two ']);
      await peer.unknownTypeFrame(12, turn.taskId);
      await peer.text(turn.taskId, ['three']);
      await peer.end(turn.taskId);
    });
    const done = nextEvent(h.agent.events, 'replyDone');
    h.session.sendText('count');
    expect((await done).text).toBe('one two three');
    expect(notices.some((n) => /not part of a frame/.test(n))).toBe(true);
    expect(notices.some((n) => /unknown type 12/.test(n))).toBe(true);
  });

  it('delivers audio whose bytes contain ##END and ##START intact', async () => {
    h = await startHarness();
    const chunks: Buffer[] = [];
    h.agent.events.on('audio', (a) => chunks.push(a.data));
    let sent: Buffer[] = [];
    h.sim.onTurn(async (turn, peer) => {
      sent = await peer.audioWithMarkers(turn.taskId);
      await peer.end(turn.taskId);
    });
    const done = nextEvent(h.agent.events, 'replyDone');
    h.session.sendText('play');
    await done;
    expect(Buffer.concat(chunks).equals(Buffer.concat(sent))).toBe(true);
  });

  it('hands reply audio on as it arrives, without waiting for the frame after it', async () => {
    // An idle flush that never comes in the test's life: only the next bytes could release it.
    h = await startHarness({ agent: { timing: { ...FAST, tentativeFlushMs: 600_000 } } });
    let release: (() => void) | undefined;
    h.sim.onTurn(async (turn, peer) => {
      await peer.audio(turn.taskId, Buffer.alloc(640, 1));
      await new Promise<void>((r) => (release = r));
      await peer.end(turn.taskId);
    });
    const audio = nextEvent(h.agent.events, 'audio');
    h.session.sendText('speak');
    expect((await audio).data.length).toBe(640);
    release?.();
  });

  it("answers a call whose id and method unescape to '##END', and keeps running", async () => {
    h = await startHarness();
    const { sim } = h;
    const peer = sim.peer();
    // The frame holds no marker; JSON.parse makes one. Echoed back raw, it would end our reply
    // frame early (encodeFrame refuses it, and the throw took the whole process down).
    await peer.frame(
      FrameType.MCP,
      'mcp00001',
      '{"type":"call","data":{"call_id":"\\u0023\\u0023END","method":"\\u0023\\u0023END"}}',
      0,
    );
    const answered = () =>
      sim.received.find(
        (f) =>
          f.type === FrameType.MCP &&
          (f.json as { data?: { call_id?: string } })?.data?.call_id === '##END',
      );
    await until(() => answered() !== undefined, 'the answer to the ##END call');
    const reply = answered()!;
    expect(reply.payload.includes('##END')).toBe(false);
    expect((reply.json as { data: { result: unknown } }).data.result).toMatchObject({
      success: false,
      error: expect.stringContaining("no service named '##END'") as unknown,
    });
    // Still connected and answering.
    expect(await peer.call('get_current_time', {})).toMatchObject({ success: true });
  });

  it('reports an oversized frame as a protocol error and reconnects', async () => {
    h = await startHarness({ agent: { timing: { authGraceMs: 30, backoffInitialMs: 10 } } });
    const notices: string[] = [];
    h.agent.events.on('notice', (n) => notices.push(n.message));
    await h.sim.peer().oversizedFrame(4 * 1024 * 1024 + 10);
    await nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'reconnecting');
    await nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'ready');
    expect(notices.some((n) => /larger than 4194304 bytes/.test(n))).toBe(true);
  });

  it('survives the link dropping mid-turn: the partial reply is closed, then it reconnects', async () => {
    h = await startHarness();
    h.sim.onTurn(async (turn, peer) => {
      await peer.dropMidTurn(turn.taskId);
    });
    const deltas: string[] = [];
    h.agent.events.on('replyDelta', (d) => deltas.push(d.text));
    const interrupted: string[] = [];
    h.agent.events.on('replyInterrupted', (r) => interrupted.push(r.text));
    h.session.sendText('tell me a story');
    await nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'reconnecting');
    // Whatever part of the reply arrived is closed as interrupted, not left open.
    expect(interrupted).toEqual(deltas.length ? [deltas.join('')] : []);
    await nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'ready');
    expect(h.session.sendText('again').ok).toBe(true);
  });
});

describe('Advent session: goodbye', () => {
  it('says ##DISCONNECT when stopped during the login grace period, once it has registered', async () => {
    // A long grace period: the session is still "authenticating" when it is stopped.
    h = await startHarness({
      agent: { timing: { ...FAST, authGraceMs: 60_000 } },
      waitReady: false,
    });
    await until(() => h!.sim.registrations().length === 1, 'register');
    expect(h.session.state.status).toBe('authenticating');
    await h.session.stop();
    const frames = h.sim.received.map((f) => f.text ?? '');
    expect(frames.filter((t) => t === '##DISCONNECT')).toHaveLength(1);
    expect(h.session.connection.pendingTimers).toBe(0);
    await until(() => h!.sim.openConnections === 0, 'server side closed');
  });

  it('says nothing when stopped before the socket opened', async () => {
    h = await startHarness();
    const port = h.sim.port;
    await h.sim.stop();
    await h.reached((s) => s.status === 'reconnecting');
    await h.session.stop();
    expect(h.session.state).toMatchObject({ status: 'offline', reason: 'stopped' });
    expect(port).toBeGreaterThan(0);
    expect(h.session.connection.liveSockets).toBe(0);
  });
});

describe('Advent session: the calls of one connection', () => {
  it('never runs a call_id again, however many calls came after it', async () => {
    let runs = 0;
    const counter: Service = {
      name: 'bump_counter',
      title: 'Bump counter',
      description: 'Counts its runs.',
      parameters: { type: 'object', properties: {} },
      risk: 'read',
      timeoutMs: 1000,
      run: async () => ++runs,
    };
    // 300 calls at once on purpose: the memory of ids is what is tested, not the pace.
    h = await startHarness({ agent: { services: [counter], overrides: { callPace: UNPACED } } });
    const peer = h.sim.peer();
    const calls = Array.from({ length: 300 }, (_, i) => ({
      method: 'bump_counter',
      params: {},
      callId: `n${i}`,
    }));
    const first = await peer.callMany(calls);
    expect(runs).toBe(300);
    // The first id again, 300 calls later (past the 256 a fixed memory once kept).
    const resultsFor = (id: string) =>
      h!.sim.received.filter(
        (f) =>
          f.type === FrameType.MCP &&
          (f.json as { type?: string; data?: { call_id?: string } })?.data?.call_id === id,
      );
    await peer.frame(
      FrameType.MCP,
      'mcp00001',
      JSON.stringify({ type: 'call', data: { call_id: 'n0', method: 'bump_counter', params: {} } }),
      0,
    );
    await until(() => resultsFor('n0').length === 2, 'the repeat to be answered');
    expect(runs).toBe(300);
    expect((resultsFor('n0')[1]!.json as { data: { result: unknown } }).data.result).toEqual({
      success: true,
      data: (first[0] as { data: unknown }).data,
    });
  });

  it('never sends a result on a newer connection than the one its call came on', async () => {
    let finish: (v: string) => void = () => undefined;
    const slow: Service = {
      name: 'slow_lookup',
      title: 'Slow lookup',
      description: 'Answers when the test says so.',
      parameters: { type: 'object', properties: {} },
      risk: 'read',
      timeoutMs: 10_000,
      run: () => new Promise<string>((resolve) => (finish = resolve)),
    };
    h = await startHarness({ agent: { services: [slow] } });
    const notices: string[] = [];
    h.agent.events.on('notice', (n) => notices.push(n.message));
    const started = nextEvent(h.agent.events, 'callStarted');
    void h.sim
      .peer()
      .call('slow_lookup', {})
      .catch(() => undefined);
    await started;
    // The call runs; meanwhile its connection drops and a new one is made.
    await h.sim.peer().drop();
    await h.reached((s) => s.status === 'reconnecting');
    await nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'ready');
    finish('looked up');
    await until(
      () => notices.some((n) => /was not sent: the connection it came on is gone/.test(n)),
      'the late result to be held back',
    );
    const results = h.sim.received.filter((f) => (f.json as { type?: string })?.type === 'result');
    expect(results).toEqual([]);
    // The call itself ran and is recorded.
    const audit = await h.agent.queryAudit({ service: 'slow_lookup' });
    expect(audit.records[0]).toMatchObject({ outcome: 'ok' });
  });
});

describe('Advent session: bounds', () => {
  it('holds at most a few replies of bounded length, whatever task ids the server makes up', async () => {
    h = await startHarness();
    const notices: string[] = [];
    h.agent.events.on('notice', (n) => notices.push(n.message));
    const peer = h.sim.peer();
    const long = 'x'.repeat(MAX_REPLY_CHARS / 4);
    // 40 made-up tasks, none ever ended, each sent more text than one reply may hold.
    for (let t = 0; t < 40; t++) {
      const task = `fake${String(t).padStart(4, '0')}`;
      for (let i = 0; i < 5; i++) await peer.text(task, [long]);
    }
    await peer.text('fakeDONE', ['last']);
    await until(() => notices.some((n) => /replies were open at once/.test(n)), 'the drop note');
    const turns = (h.session as unknown as { turns: { openReplies: number; heldChars: number } })
      .turns;
    await until(() => turns.heldChars >= 4, 'the last text');
    expect(turns.openReplies).toBeLessThanOrEqual(MAX_OPEN_REPLIES);
    expect(turns.heldChars).toBeLessThanOrEqual(MAX_OPEN_REPLIES * MAX_REPLY_CHARS);
    expect(notices.some((n) => /passed 65536 characters; the rest of it is dropped/.test(n))).toBe(
      true,
    );
  });

  it('cuts a method name of megabytes before the gate and the audit see it, and answers the call', async () => {
    h = await startHarness();
    const huge = 'm'.repeat(3 * 1024 * 1024);
    const result = await h.sim.peer().call(huge, {});
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/no service named/);
    expect(result.error!.length).toBeLessThan(2000);
    const audit = await h.agent.queryAudit({});
    expect(audit.records).toHaveLength(1);
    expect(JSON.stringify(audit.records[0]).length).toBeLessThan(4000);
  });

  it('shows a STATUS of any length as a line of bounded length', async () => {
    h = await startHarness();
    const shown = nextEvent(h.agent.events, 'status');
    await h.sim.peer().status(`##INFO:${'z'.repeat(100_000)}`);
    const { text } = await shown;
    expect(text.startsWith('##INFO:zzz')).toBe(true);
    expect(text.length).toBeLessThan(2100);
  });

  it('ignores a call whose call_id no real server would send, without running it', async () => {
    h = await startHarness();
    const notices: string[] = [];
    h.agent.events.on('notice', (n) => notices.push(n.message));
    await h.sim.peer().frame(
      FrameType.MCP,
      'mcp00001',
      JSON.stringify({
        type: 'call',
        data: { call_id: 'i'.repeat(100_000), method: 'get_current_time', params: {} },
      }),
      0,
    );
    await until(() => notices.some((n) => /call_id of 100000 characters/.test(n)), 'the note');
    expect((await h.agent.queryAudit({})).records).toEqual([]);
    expect(await h.sim.peer().call('get_current_time', {})).toMatchObject({ success: true });
  });
});
