import { afterEach, describe, expect, it } from 'vitest';
import { seededIds } from '../../../app/ids.js';
import { MAX_NAME_CHARS, MAX_REPLY_CHARS, MAX_STATUS_CHARS } from '../../../app/wire/kit/bounds.js';
import type { ConnectionState } from '../../../app/contract/connection.js';
import type { SessionEvents } from '../../../app/wire/session.js';
import { Turns } from '../../../app/wire/xiaozhi/turns.js';
import { encodeAudioFrame } from '../../../app/wire/xiaozhi/binary.js';
import { OpusEncoder } from '../../../app/audio/opus.js';
import { REPLY_AUDIO_BURST_MS, REPLY_AUDIO_PACE } from '../../../app/wire/kit/audio-budget.js';
import { correlation, samples, voiceLike } from '../../audio/correlation.js';
import { nextEvent, until } from '../../helpers/wait.js';
import { recordEvents } from '../../helpers/ws-agent.js';
import { type Pair, closeOpenPair, open } from './harness.js';

afterEach(closeOpenPair);

/** PCM to the session in 20 ms chunks, as the UI sends it. */
function speak(p: Pair, taskId: string, pcm: Buffer): void {
  for (let at = 0; at < pcm.length; at += 640) {
    const r = p.session.voiceChunk(taskId, pcm.subarray(at, at + 640));
    expect(r).toEqual({ ok: true });
  }
}

const pcmOf = (audio: SessionEvents['audio'][]) => Buffer.concat(audio.map((a) => a.data));

// ------------------------------------------------------------------------------------------------

describe('XiaoZhi device: typed chat', () => {
  it('sends listen detect with the text and turns stt, llm and tts into transcript, mood and reply', async () => {
    const p = await open({ sim: { sessionId: 's-1' } });
    const reply24k = voiceLike(900, 24_000);
    p.sim.onText((turn, conn) => {
      conn.stt(turn.text);
      conn.llm('happy');
      conn.ttsStart();
      conn.sentence('Hello there.');
      conn.sentence('How are you?');
      conn.audio(reply24k);
      conn.ttsStop();
    });
    const transcripts = recordEvents(p.session, 'transcript');
    const moods = recordEvents(p.session, 'mood');
    const deltas = recordEvents(p.session, 'replyDelta');
    const audio = recordEvents(p.session, 'audio');
    const done = nextEvent(p.session.events, 'replyDone');
    const sent = p.session.sendText('what is up?');
    if (!sent.ok) throw new Error(sent.message);
    expect(sent.taskId).toMatch(/^[0-9a-f]{8}$/);
    const reply = await done;

    expect(p.sim.messages('listen')).toEqual([
      { conn: 1, session_id: 's-1', type: 'listen', state: 'detect', text: 'what is up?' },
    ]);
    expect(transcripts).toEqual([{ taskId: sent.taskId, text: 'what is up?' }]);
    expect(moods).toEqual([{ taskId: sent.taskId, emoji: '🙂' }]);
    expect(reply).toEqual({ taskId: sent.taskId, text: 'Hello there. How are you?' });
    expect(deltas.map((d) => d.text).join('')).toBe(reply.text);
    expect(audio.length).toBeGreaterThan(0);
    for (const a of audio) expect(a).toMatchObject({ taskId: sent.taskId, sampleRate: 24_000 });
    // Opus down at 24 kHz decoded at 24 kHz: the voice the server sent is the voice played.
    expect(correlation(samples(reply24k), samples(pcmOf(audio))).value).toBeGreaterThanOrEqual(0.8);
    expect(p.sim.violations).toEqual([]);
  });

  it('shows the emoji an llm message carries, and joins CJK subtitles without spaces', async () => {
    const p = await open();
    p.sim.onText((_turn, conn) => {
      conn.llm('thinking', '🤯');
      conn.ttsStart();
      conn.sentence('现在是');
      conn.sentence('下午三点。');
      conn.ttsStop();
    });
    const mood = nextEvent(p.session.events, 'mood');
    const done = nextEvent(p.session.events, 'replyDone');
    p.session.sendText('几点了');
    expect((await mood).emoji).toBe('🤯');
    expect((await done).text).toBe('现在是下午三点。');
  });

  it('gives a reply the server starts on its own a turn of its own', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const done = nextEvent(p.session.events, 'replyDone');
    const conn = p.sim.conn();
    conn.ttsStart();
    conn.sentence('Reminder: stand up.');
    conn.ttsStop();
    const reply = await done;
    expect(reply.taskId).toMatch(/^[0-9a-f]{8}$/);
    expect(reply.text).toBe('Reminder: stand up.');
  });

  it('shows a system command to the user and never runs it', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const status = nextEvent(p.session.events, 'status');
    p.sim.sendSystem('reboot');
    const text = await status;
    expect(text).toMatch(/asked to run the system command 'reboot'; it was not run/);
    expect(p.logs.some((l) => l.startsWith('warn:') && l.includes("'reboot'"))).toBe(true);
    expect(p.session.state.status).toBe('ready');
  });

  it('shows alerts and custom messages as notices', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const statuses = recordEvents(p.session, 'status');
    p.sim.sendAlert('battery low');
    p.sim.conn().sendCustom({ hello: 'world' });
    await until(() => statuses.length === 2, 'two notices');
    expect(statuses[0]).toBe('Warning: battery low');
    expect(statuses[1]).toMatch(/message from the server: .*world/);
    expect(p.logs.some((l) => /warn: alert from the server: Warning: battery low/.test(l))).toBe(
      true,
    );
  });

  it('quotes a huge unknown tts state in a bounded warning', async () => {
    // Each warning becomes a notice every window and the timeline keep: 8 MB states, 20 of
    // them at once, then 5 a second, would hold gigabytes within minutes.
    const p = await open({ session: { protocolVersion: 3 } });
    await p.sim.waitForTools(1);
    const state = 'x'.repeat(1 << 20);
    p.sim.conn().sendRaw(JSON.stringify({ type: 'tts', state }));
    p.sim.conn().sendRaw(JSON.stringify({ type: 'teleport', where: 'y'.repeat(1 << 20) }));
    await until(() => p.logs.filter((l) => l.startsWith('warn:')).length >= 2, 'two warnings');
    const warns = p.logs.filter((l) => l.startsWith('warn:'));
    expect(warns[0]).toMatch(/unknown state 'x{10}/);
    for (const w of warns) expect(w.length).toBeLessThanOrEqual(MAX_STATUS_CHARS + 200);
  });

  it('logs malformed and unknown messages and carries on', async () => {
    const p = await open({ session: { protocolVersion: 3 } });
    await p.sim.waitForTools(1);
    const conn = p.sim.conn();
    conn.sendRaw('not json {');
    conn.sendRaw('[1,2,3]');
    conn.sendRaw(JSON.stringify({ type: 'tts' }));
    conn.sendRaw(JSON.stringify({ type: 'teleport', where: 'mars' }));
    conn.sendBinary(Buffer.from([0, 0, 0, 9, 1])); // v3 header says 9 bytes, 1 follows
    conn.sendBinary(Buffer.from([0]));
    p.sim.onText((_t, c) => c.say('still here'));
    const done = nextEvent(p.session.events, 'replyDone');
    p.session.sendText('ping?');
    expect((await done).text).toBe('still here');
    const warns = p.logs.filter((l) => l.startsWith('warn:')).join('\n');
    expect(warns).toMatch(/unreadable message from the server \(not JSON/);
    expect(warns).toMatch(/must be a JSON object/);
    expect(warns).toMatch(/needs a 'state'/);
    expect(warns).toMatch(/unknown type 'teleport'/);
    expect(warns).toMatch(/says 9 payload bytes but only 1 follow \(truncated\)/);
    expect(warns).toMatch(/needs a 4-byte header, got 1 bytes/);
    expect(p.session.state.status).toBe('ready');
  });

  it('refuses "Say this" and turns while not connected, saying why', async () => {
    const p = await open();
    expect(p.session.capabilities).toEqual({ chat: true, voice: true, speak: false });
    expect(p.session.speak('hi')).toEqual({
      ok: false,
      message: 'Say this is not possible on a XiaoZhi server connection',
    });
    await p.sim.stop();
    await nextEvent(p.session.events, 'state', (s) => s.status === 'reconnecting');
    const sent = p.session.sendText('anyone?');
    expect(!sent.ok && sent.message).toMatch(/not connected/);
    expect(!p.session.voiceStart().ok).toBe(true);
  });
});

describe('XiaoZhi device: against the demo server', () => {
  it('a typed time question is answered through the gate and spoken back', async () => {
    const p = await open({ sim: { demo: true } });
    await p.sim.waitForTools(1);
    const audio = recordEvents(p.session, 'audio');
    const done = nextEvent(p.session.events, 'replyDone');
    const sent = p.session.sendText('what time is it?');
    if (!sent.ok) throw new Error(sent.message);
    const reply = await done;
    expect(reply.taskId).toBe(sent.taskId);
    expect(reply.text).toMatch(/^It's .*\d{1,2}:\d{2}.*\.$/);
    expect(audio.length).toBeGreaterThan(0);
    const audit = await p.agent.queryAudit({ service: 'get_current_time' });
    expect(audit.records).toHaveLength(1);
    expect(audit.records[0]).toMatchObject({ dialect: 'xiaozhi', outcome: 'ok' });
    expect(p.sim.violations).toEqual([]);
  });

  it('a spoken turn gets its transcript and a reply', async () => {
    const p = await open({ sim: { demo: true } });
    await p.sim.waitForTools(1);
    const transcript = nextEvent(p.session.events, 'transcript');
    const done = nextEvent(p.session.events, 'replyDone');
    const v = p.session.voiceStart();
    if (!v.ok) throw new Error(v.message);
    speak(p, v.taskId, voiceLike(600));
    p.session.voiceEnd(v.taskId);
    expect(await transcript).toEqual({ taskId: v.taskId, text: '(voice)' });
    expect((await done).text).toMatch(/I heard 6\d\d ms of audio/);
  });
});

describe('XiaoZhi device: voice', () => {
  for (const version of [1, 2, 3] as const) {
    it(`uploads PCM as 60 ms Opus packets framed for protocol v${version}, between listen start and stop`, async () => {
      const p = await open({ session: { protocolVersion: version } });
      await p.sim.waitForTools(1);
      const said = voiceLike(1200);
      const start = p.session.voiceStart();
      if (!start.ok) throw new Error(start.message);
      speak(p, start.taskId, said);
      expect(p.session.voiceEnd(start.taskId)).toEqual({ ok: true });
      const turn = await p.sim.waitUntil(() => p.sim.turns[0], 'the voice turn');

      expect(p.sim.listenEvents).toEqual([
        { conn: 1, state: 'start', mode: 'manual' },
        { conn: 1, state: 'stop' },
      ]);
      const frames = p.sim.received.flatMap((r) => (r.kind === 'binary' ? [r.bytes] : []));
      expect(frames).toHaveLength(Math.ceil(1200 / 60));
      frames.forEach((f, i) => {
        if (version === 2) {
          expect(f.readUInt16BE(0)).toBe(2);
          expect(f.readUInt32BE(8)).toBe(i * 60); // timestamp
          expect(f.readUInt32BE(12)).toBe(f.length - 16);
        }
        if (version === 3) expect(f.readUInt16BE(2)).toBe(f.length - 4);
      });
      expect(turn).toMatchObject({ voice: true, mode: 'manual' });
      expect(correlation(samples(said), samples(turn.pcm)).value).toBeGreaterThanOrEqual(0.8);
      expect(correlation(samples(said), samples(p.sim.receivedPcm())).value).toBeGreaterThanOrEqual(
        0.8,
      );
      expect(p.sim.violations).toEqual([]);
    });
  }

  it('in auto mode starts listening hands-free and leaves the end of speech to the server', async () => {
    const p = await open({ session: { listenMode: 'auto' } });
    await p.sim.waitForTools(1);
    const start = p.session.voiceStart();
    if (!start.ok) throw new Error(start.message);
    speak(p, start.taskId, voiceLike(300));
    p.session.voiceEnd(start.taskId);
    await p.sim.waitFor((r) => r.kind === 'binary');
    // A text message after the audio proves nothing else (no listen stop) was sent in between.
    p.session.sendText('typed');
    await p.sim.waitUntil(() => p.sim.listenEvents[1], 'the typed turn');
    expect(p.sim.listenEvents.map((e) => [e.state, e.mode])).toEqual([
      ['start', 'auto'],
      ['detect', undefined],
    ]);
  });

  it('hands-free: once the answer is spoken it says it listens again, as the firmware does', async () => {
    const p = await open({ session: { listenMode: 'auto' } });
    await p.sim.waitForTools(1);
    const start = p.session.voiceStart();
    if (!start.ok) throw new Error(start.message);
    speak(p, start.taskId, voiceLike(300));
    const done = nextEvent(p.session.events, 'replyDone');
    p.sim.say('here I am');
    await done;
    await p.sim.waitUntil(() => p.sim.listenEvents[1], 'listening again');
    expect(p.sim.listenEvents.map((e) => [e.state, e.mode])).toEqual([
      ['start', 'auto'],
      ['start', 'auto'],
    ]);
  });

  it('push-to-talk: a spoken answer does not reopen listening by itself', async () => {
    const p = await open({ session: { listenMode: 'manual' } });
    await p.sim.waitForTools(1);
    const start = p.session.voiceStart();
    if (!start.ok) throw new Error(start.message);
    speak(p, start.taskId, voiceLike(300));
    const done = nextEvent(p.session.events, 'replyDone');
    p.sim.say('here I am');
    await done;
    p.session.sendText('typed');
    await p.sim.waitUntil(() => p.sim.listenEvents[1], 'the typed turn');
    expect(p.sim.listenEvents.map((e) => e.state)).toEqual(['start', 'detect']);
  });

  it('downlink audio arrives at the rate of the server hello', async () => {
    const p = await open({ sim: { downlinkRate: 16_000 } });
    await p.sim.waitForTools(1);
    p.sim.onText((_t, c) => c.say('ok', { pcm: voiceLike(300, 16_000) }));
    const audio = nextEvent(p.session.events, 'audio');
    p.session.sendText('hi');
    expect((await audio).sampleRate).toBe(16_000);
  });

  it('barge-in: a new voice turn aborts the reply playing and drops its late audio', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const tone = voiceLike(600, 24_000);
    const first = p.session.sendText('tell me a story');
    if (!first.ok) throw new Error(first.message);
    await p.sim.waitUntil(() => p.sim.turns[0], 'the typed turn');
    const conn = p.sim.conn();
    const audio = recordEvents(p.session, 'audio');
    const deltas = recordEvents(p.session, 'replyDelta');
    conn.ttsStart();
    conn.sentence('Once upon a time');
    conn.audio(tone);
    await until(() => audio.length >= 5, 'the first reply playing');

    const interrupted = nextEvent(p.session.events, 'replyInterrupted');
    const second = p.session.voiceStart();
    if (!second.ok) throw new Error(second.message);
    expect(await interrupted).toEqual({ taskId: first.taskId, text: 'Once upon a time' });
    const abort = await p.sim.waitUntil(() => p.sim.aborts[0], 'the abort');
    expect(abort).toEqual({ conn: 1, reason: 'wake_word_detected' });
    const order = p.sim.messages('abort').concat(p.sim.messages('listen'));
    expect(order.map((m) => m.type)).toEqual(['abort', 'listen', 'listen']);
    const before = audio.length;

    // What the server had in flight for the old reply still arrives…
    conn.sentence('and they lived happily');
    conn.audio(tone);
    conn.ttsStop();
    // …then the answer to the new turn.
    speak(p, second.taskId, voiceLike(300));
    p.session.voiceEnd(second.taskId);
    await p.sim.waitUntil(() => p.sim.turns[1], 'the voice turn');
    const done = nextEvent(p.session.events, 'replyDone');
    conn.stt('(voice)');
    conn.ttsStart();
    conn.sentence('New answer');
    conn.audio(tone);
    conn.ttsStop();
    expect(await done).toEqual({ taskId: second.taskId, text: 'New answer' });

    const late = audio.slice(before);
    expect(late.length).toBeGreaterThan(0);
    expect(late.every((a) => a.taskId === second.taskId)).toBe(true);
    expect(deltas.map((d) => d.text)).toEqual(['Once upon a time', 'New answer']);
  });

  it('interrupt() aborts the reply playing and drops its late audio', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const sent = p.session.sendText('go on');
    if (!sent.ok) throw new Error(sent.message);
    await p.sim.waitUntil(() => p.sim.turns[0], 'the turn');
    const conn = p.sim.conn();
    const audio = recordEvents(p.session, 'audio');
    conn.ttsStart();
    conn.audio(voiceLike(300, 24_000));
    await until(() => audio.length > 0, 'audio');
    const interrupted = nextEvent(p.session.events, 'replyInterrupted');
    p.session.interrupt();
    expect((await interrupted).taskId).toBe(sent.taskId);
    await p.sim.waitUntil(() => p.sim.aborts[0], 'the abort');
    const before = audio.length;
    conn.audio(voiceLike(300, 24_000));
    conn.ttsStop();
    // The next reply is delivered again, so the late audio above was seen and dropped.
    const done = nextEvent(p.session.events, 'replyDone');
    conn.say('fresh', { pcm: voiceLike(120, 24_000) });
    const fresh = await done;
    expect(fresh.taskId).not.toBe(sent.taskId);
    expect(audio.slice(before).every((a) => a.taskId === fresh.taskId)).toBe(true);
  });

  it('refuses chunks after the turn ended or was cancelled, with the reason', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const a = p.session.voiceStart();
    if (!a.ok) throw new Error(a.message);
    speak(p, a.taskId, voiceLike(120));
    p.session.voiceEnd(a.taskId);
    const late = p.session.voiceChunk(a.taskId, Buffer.alloc(640));
    expect(!late.ok && late.message).toMatch(/has ended \(voiceEnd was called\)/);
    expect(p.session.voiceChunk('nope1234', Buffer.alloc(640))).toMatchObject({ ok: false });

    const b = p.session.voiceStart();
    if (!b.ok) throw new Error(b.message);
    const stale = p.session.voiceChunk(a.taskId, Buffer.alloc(640));
    expect(!stale.ok && stale.message).toMatch(/no voice turn/);
    p.session.voiceCancel(b.taskId);
    const cancelled = p.session.voiceChunk(b.taskId, Buffer.alloc(640));
    expect(!cancelled.ok && cancelled.message).toMatch(/was cancelled/);
    await p.sim.waitUntil(() => p.sim.aborts[0], 'the abort of the cancelled turn');
    // Cancelled, not finished: no listen stop for it.
    expect(p.sim.listenEvents.map((e) => e.state)).toEqual(['start', 'stop', 'start']);
  });

  it('a lost link ends the reply as interrupted and closes the upload', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const sent = p.session.sendText('long answer please');
    if (!sent.ok) throw new Error(sent.message);
    await p.sim.waitUntil(() => p.sim.turns[0], 'the turn');
    const delta = nextEvent(p.session.events, 'replyDelta');
    p.sim.conn().ttsStart();
    p.sim.conn().sentence('Part one');
    await delta;
    const interrupted = nextEvent(p.session.events, 'replyInterrupted');
    p.sim.dropConnections();
    expect(await interrupted).toEqual({ taskId: sent.taskId, text: 'Part one' });

    await nextEvent(p.session.events, 'state', (s) => s.status === 'ready');
    const v = p.session.voiceStart();
    if (!v.ok) throw new Error(v.message);
    speak(p, v.taskId, voiceLike(120));
    p.sim.dropConnections();
    await nextEvent(p.session.events, 'state', (s) => s.status === 'reconnecting');
    const chunk = p.session.voiceChunk(v.taskId, Buffer.alloc(640));
    expect(!chunk.ok && chunk.message).toMatch(/ended when the connection was lost/);
  });

  it('drops a downlink frame framed for another protocol version, with a log line', async () => {
    const p = await open({ session: { protocolVersion: 2 } });
    await p.sim.waitForTools(1);
    // A v3 frame where v2 is expected: the header cannot fit.
    p.sim.conn().sendBinary(encodeAudioFrame(3, Buffer.alloc(20)));
    await until(() => p.logs.some((l) => l.includes('audio frame dropped')), 'the log line');
    expect(p.logs.join('\n')).toMatch(
      /v2 audio frame says version 0; device and server disagree on Protocol-Version/,
    );
  });
});

describe('XiaoZhi device: what a server sends is bounded', () => {
  it('shows a huge alert as a bounded notice and log line', async () => {
    // Both stay in the timeline (500 items): megabytes each, from a server that chose the size.
    const p = await open();
    await p.sim.waitForTools(1);
    const status = nextEvent(p.session.events, 'status');
    p.sim.conn().sendAlert('y'.repeat(1_000_000));
    expect((await status).length).toBeLessThan(MAX_STATUS_CHARS + 100);
    await until(() => p.logs.some((l) => l.includes('alert from the server')), 'the log line');
    const line = p.logs.find((l) => l.includes('alert from the server'))!;
    expect(line).toMatch(/Warning: yyy/);
    expect(line.length).toBeLessThan(MAX_STATUS_CHARS + 100);
  });

  it.each([
    ['text', (big: string) => ['happy', big] as const],
    ['emotion', (big: string) => [big, undefined] as const],
  ])('shows a bounded mood for an llm message with a huge %s', async (_, args) => {
    const p = await open();
    await p.sim.waitForTools(1);
    const mood = nextEvent(p.session.events, 'mood');
    const [emotion, text] = args(`🤯${'z'.repeat(1_000_000)}`);
    p.sim.conn().llm(emotion, text);
    const { emoji } = await mood;
    expect(emoji.startsWith('🤯zzz')).toBe(true);
    expect(emoji.length).toBeLessThan(MAX_NAME_CHARS + 32);
  });

  it('says briefly which transport a server hello named that is not websocket', async () => {
    const p = await open({ sim: { sendHello: false }, waitReady: false });
    const conn = await p.sim.waitForConnection(1);
    await p.sim.waitFor(
      (r) => r.kind === 'text' && (r.json as { type?: unknown }).type === 'hello',
    );
    conn.sendJson({ type: 'hello', transport: `udp${'u'.repeat(1_000_000)}` });
    const said = (s: ConnectionState) => (s.status === 'reconnecting' ? s.lastError : '');
    await until(() => p.states.some((s) => /transport/.test(said(s))), 'the refusal');
    const message = said(p.states.find((s) => /transport/.test(said(s)))!);
    expect(message).toMatch(/names transport 'udpuuu/);
    expect(message.length).toBeLessThan(MAX_NAME_CHARS + 300);
  });

  /** A typed turn whose reply the test sends itself; `finish` ends it and waits for the agent. */
  async function replyByHand() {
    const p = await open({ sim: { downlinkRate: 16_000 } });
    await p.sim.waitForTools(1);
    const sent = p.session.sendText('hi');
    if (!sent.ok) throw new Error(sent.message);
    await p.sim.waitUntil(() => p.sim.turns[0], 'the typed turn');
    const audio = recordEvents(p.session, 'audio');
    const conn = p.sim.conn();
    return {
      p,
      audio,
      conn,
      async finish() {
        const done = nextEvent(p.session.events, 'replyDone');
        conn.ttsStop();
        await done;
      },
    };
  }

  it('plays no Opus packet too short to hold audio, says so once, and plays the real ones', async () => {
    // Such a packet (2 bytes) decoded to up to 120 ms of sound, ~1000 times its size.
    const { p, audio, conn, finish } = await replyByHand();
    conn.ttsStart();
    for (let i = 0; i < 50; i++)
      conn.sendBinary(encodeAudioFrame(1, Buffer.from([(31 << 3) | 3, 6])));
    conn.audio(voiceLike(300, 16_000));
    await finish();
    await until(() => pcmOf(audio).length >= 300 * 32, 'the real audio');
    expect(pcmOf(audio).length).toBe(300 * 32); // 5 packets of 60 ms, nothing more
    expect(p.logs.filter((l) => /shorter than \d+ bytes/.test(l))).toHaveLength(1);
  });

  it('decodes no more reply audio than a long answer at once plus a few times real time, and says so once', async () => {
    // 150 s of real 60 ms packets sent as fast as the socket goes: a server flooding audio.
    const { p, audio, conn, finish } = await replyByHand();
    const encoder = new OpusEncoder(16_000);
    const [packet] = encoder.encodePcm(voiceLike(60, 16_000));
    encoder.close();
    const started = performance.now();
    conn.ttsStart();
    for (let i = 0; i < 2500; i++) conn.sendBinary(encodeAudioFrame(1, packet!));
    await finish();
    const elapsedMs = performance.now() - started;
    const playedMs = pcmOf(audio).length / 32;
    expect(playedMs).toBeGreaterThanOrEqual(REPLY_AUDIO_BURST_MS);
    expect(playedMs).toBeLessThanOrEqual(REPLY_AUDIO_BURST_MS + REPLY_AUDIO_PACE * elapsedMs + 120);
    expect(playedMs).toBeLessThan(2500 * 60);
    expect(p.logs.filter((l) => /faster than it can be played/.test(l))).toHaveLength(1);
  });
});

describe('XiaoZhi Turns: bounds', () => {
  it('keeps at most MAX_REPLY_CHARS of subtitles for one reply, and says so once', () => {
    const turns = new Turns(seededIds(5));
    const odd: string[] = [];
    let shown = 0;
    turns.events.on('odd', ({ message }) => odd.push(message));
    turns.events.on('replyDelta', ({ text }) => (shown += text.length));
    turns.begin();
    turns.start();
    for (let i = 0; i < 20; i++) turns.sentence('字'.repeat(MAX_REPLY_CHARS / 8));
    const done = new Promise<string>((r) => turns.events.on('replyDone', ({ text }) => r(text)));
    turns.stop();
    expect(shown).toBe(MAX_REPLY_CHARS);
    expect(odd).toHaveLength(1);
    return done.then((text) => expect(text).toHaveLength(MAX_REPLY_CHARS));
  });
});
