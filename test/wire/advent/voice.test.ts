import { afterEach, describe, expect, it } from 'vitest';
import { OpusEncoder, OpusUnframer, frameOpusPackets } from '../../../app/audio/opus.js';
import type { Turn } from '../../../sim/advent/records.js';
import { LISTENING_STATUS } from '../../../sim/advent/conn.js';
import { FrameType, taskKey } from '../../../app/wire/advent/frame.js';
import { PCM_BYTES_PER_MS } from '../../../app/wire/advent/voice.js';
import { MAX_REPLY_AUDIO_MS_PER_FRAME } from '../../../app/wire/kit/bounds.js';
import { REPLY_AUDIO_BURST_MS, REPLY_AUDIO_PACE } from '../../../app/wire/kit/audio-budget.js';
import { correlation, samples, voiceLike } from '../../audio/correlation.js';
import { type Harness, startHarness } from '../../helpers/agent-harness.js';
import { nextEvent, until } from '../../helpers/wait.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Speech cut into UI-sized chunks (the UI's sizes need not match any frame size). */
function chunks(pcm: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < pcm.length; at += size) out.push(pcm.subarray(at, at + size));
  return out;
}

function say(h: Harness, taskId: string, pcm: Buffer, size = 1000): void {
  for (const c of chunks(pcm, size)) {
    const sent = h.session.voiceChunk(taskId, c);
    if (!sent.ok) throw new Error(sent.message);
  }
}

function turnsOf(h: Harness): Turn[] {
  const turns: Turn[] = [];
  h.sim.onTurn((t) => {
    turns.push(t);
  });
  return turns;
}

const framesOf = (h: Harness, taskId: string, type?: number) =>
  h.sim.received.filter(
    (f) => taskKey(f.taskId) === taskId && (type === undefined || f.type === type),
  );

describe('Advent voice: manual (push-to-talk)', () => {
  it('sends PCM in 20–60 ms AUDIO_FRAMEs with increasing seq, markers nudged, then END_FRAME', async () => {
    h = await startHarness();
    const turns = turnsOf(h);
    const pcm = voiceLike(700);
    // A chunk whose samples spell ##END and ##START: the frame must not carry them.
    Buffer.from('##END##START', 'latin1').copy(pcm, 4000);
    const started = h.session.voiceStart();
    if (!started.ok) throw new Error(started.message);
    say(h, started.taskId, pcm, 1000);
    expect(h.session.voiceEnd(started.taskId)).toEqual({ ok: true });
    await until(() => turns.length === 1, 'the voice turn');

    const frames = framesOf(h, started.taskId);
    const audio = frames.filter((f) => f.type === FrameType.AUDIO);
    expect(frames.at(-1)!.type).toBe(FrameType.END);
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i));
    for (const f of audio.slice(0, -1)) {
      expect(f.payload.length).toBeGreaterThanOrEqual(640);
      expect(f.payload.length).toBeLessThanOrEqual(1920);
    }
    for (const f of audio) {
      expect(f.payload.includes('##END')).toBe(false);
      expect(f.payload.includes('##START')).toBe(false);
    }
    expect(turns[0]!.audio.length).toBe(pcm.length);
    expect(correlation(samples(pcm), samples(turns[0]!.audio), 0).value).toBeGreaterThan(0.999);
    expect(h.sim.violations).toEqual([]);
  });

  it('with Opus input, the server decodes what it got and it matches what was said', async () => {
    h = await startHarness({ profile: { inputAudioFormat: 'opus' } });
    const turns = turnsOf(h);
    const pcm = voiceLike(1200);
    const started = h.session.voiceStart();
    if (!started.ok) throw new Error(started.message);
    say(h, started.taskId, pcm, 640);
    h.session.voiceEnd(started.taskId);
    await until(() => turns.length === 1, 'the voice turn');

    // Each frame: whole length-prefixed (big-endian) 60 ms packets, nothing left over.
    for (const f of framesOf(h, started.taskId, FrameType.AUDIO)) {
      const u = new OpusUnframer('be');
      expect(u.push(f.payload).length).toBeGreaterThanOrEqual(1);
      expect(u.pendingBytes).toBe(0);
    }
    const turn = turns[0]!;
    expect(turn.opus!.length).toBeLessThan(pcm.length / 4);
    expect(turn.audio.length).toBe(20 * 1920); // 1200 ms: 20 whole packets, nothing to pad
    expect(correlation(samples(pcm), samples(turn.audio), 400).value).toBeGreaterThanOrEqual(0.8);
    expect(h.sim.violations).toEqual([]);
  });

  it('switches the Opus length to little-endian when the profile says so', async () => {
    h = await startHarness({
      profile: { inputAudioFormat: 'opus', opusLengthOrder: 'le' },
      sim: { opusLengthOrder: 'le' },
    });
    const turns = turnsOf(h);
    const pcm = voiceLike(600);
    const started = h.session.voiceStart();
    if (!started.ok) throw new Error(started.message);
    say(h, started.taskId, pcm, 1920);
    h.session.voiceEnd(started.taskId);
    await until(() => turns.length === 1, 'the voice turn');
    const first = framesOf(h, started.taskId, FrameType.AUDIO)[0]!;
    expect(first.payload.readUInt16LE(0) + 2).toBeLessThanOrEqual(first.payload.length);
    expect(correlation(samples(pcm), samples(turns[0]!.audio), 400).value).toBeGreaterThan(0.8);
  });

  it('refuses chunks after voiceEnd and voiceCancel, with a clear reason, and sends nothing', async () => {
    h = await startHarness();
    const a = h.session.voiceStart();
    if (!a.ok) throw new Error(a.message);
    say(h, a.taskId, voiceLike(100));
    h.session.voiceEnd(a.taskId);
    const late = h.session.voiceChunk(a.taskId, Buffer.alloc(640));
    expect(late).toEqual({ ok: false, message: expect.stringMatching(/has ended.*voiceStart/) });
    expect(h.session.voiceEnd(a.taskId).ok).toBe(false);

    const b = h.session.voiceStart();
    if (!b.ok) throw new Error(b.message);
    say(h, b.taskId, voiceLike(100));
    h.session.voiceCancel(b.taskId);
    expect(h.session.voiceChunk(b.taskId, Buffer.alloc(640))).toEqual({
      ok: false,
      message: expect.stringMatching(/was cancelled/),
    });
    expect(h.session.voiceChunk('nope0000', Buffer.alloc(640)).ok).toBe(false);
    await until(() => framesOf(h!, a.taskId, FrameType.END).length === 1, 'END of the first');
    await new Promise((r) => setTimeout(r, 50));
    expect(framesOf(h, b.taskId, FrameType.END)).toEqual([]);
    const seqs = framesOf(h, a.taskId).map((f) => f.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i)); // no late frame slipped in
  });
});

describe('Advent voice: a lost link', () => {
  it('ends the open upload when the link drops; its chunks are refused with the reason', async () => {
    h = await startHarness();
    const a = h.session.voiceStart();
    if (!a.ok) throw new Error(a.message);
    say(h, a.taskId, voiceLike(100));
    const lost = nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'reconnecting');
    await h.sim.peer().hangUp();
    await lost;
    expect(h.session.voiceChunk(a.taskId, Buffer.alloc(640))).toEqual({
      ok: false,
      message: expect.stringMatching(/connection was lost/),
    });
  });
});

/**
 * A typed turn on an Opus connection, its reply's audio events and the session's warnings
 * recorded; `finish` ends the reply and waits until the agent has it all.
 */
async function opusReply() {
  h = await startHarness({ profile: { format: 'opus' } });
  const harness = h;
  const turns = turnsOf(harness);
  const sent = harness.session.sendText('talk to me');
  if (!sent.ok) throw new Error(sent.message);
  await until(() => turns.length === 1, 'the text turn');
  const audio: { data: Buffer; sampleRate?: number }[] = [];
  harness.agent.events.on('audio', (a) => audio.push(a));
  const warnings: string[] = [];
  harness.session.events.on('log', (l) => l.level === 'warn' && warnings.push(l.message));
  const peer = harness.sim.peer();
  return {
    harness,
    taskId: sent.taskId,
    audio,
    pcm: () => Buffer.concat(audio.map((a) => a.data)),
    warnings,
    peer,
    async finish() {
      const done = nextEvent(harness.agent.events, 'replyDone');
      await peer.end(sent.taskId);
      await done;
    },
  };
}

describe('Advent voice: reply audio', () => {
  it('decodes Opus reply audio to PCM events at the decoder rate', async () => {
    const { taskId, audio, pcm: played, peer, finish } = await opusReply();
    const spoken = voiceLike(900);
    await peer.speech(taskId, spoken);
    await finish();
    expect(audio.length).toBeGreaterThan(0);
    expect(audio.every((a) => a.sampleRate === 16_000)).toBe(true);
    const pcm = played();
    expect(pcm.length).toBe(15 * 1920); // 900 ms: 15 packets of 60 ms
    expect(correlation(samples(spoken), samples(pcm), 400).value).toBeGreaterThanOrEqual(0.8);
  });

  it('a reply frame of empty Opus packets plays at most its bounded length, with one warning', async () => {
    // Opus lets a 2-byte packet stand for 120 ms: 16 Ki of them (64 KiB) were half an hour of
    // PCM from one frame, and 1 MiB froze the agent for seconds building ~1 GiB of it.
    const { harness, taskId, pcm: played, warnings, peer, finish } = await opusReply();
    // Real speech first: it plays in full.
    await peer.speech(taskId, voiceLike(900));
    const bomb = Buffer.alloc(64 * 1024);
    for (let at = 0; at < bomb.length; at += 4) {
      bomb.writeUInt16BE(2, at);
      bomb[at + 2] = (31 << 3) | 3; // CELT 20 ms, code 3: a frame count follows
      bomb[at + 3] = 6; // six empty frames: 120 ms of nothing
    }
    // …and a 1-byte packet, which holds no audio at all.
    const tiny = Buffer.from([0, 1, 31 << 3]);
    await peer.frame(FrameType.AUDIO, taskId, bomb);
    await peer.frame(FrameType.AUDIO, taskId, bomb);
    await peer.frame(FrameType.AUDIO, taskId, tiny);
    await finish();
    const pcm = played();
    const msPerFrame = MAX_REPLY_AUDIO_MS_PER_FRAME + 120; // the last packet kept may pass it
    expect(pcm.length).toBeGreaterThanOrEqual(15 * 1920); // the 900 ms of speech
    expect(pcm.length).toBeLessThanOrEqual(15 * 1920 + 2 * msPerFrame * PCM_BYTES_PER_MS);
    expect(warnings.filter((w) => w.includes(taskId))).toEqual([
      expect.stringMatching(/dropped: shorter than 3 bytes/),
    ]);
    expect(harness.session.state.status).toBe('ready');
  });

  it('decodes no more reply audio than a long answer at once plus a few times real time, and says so once', async () => {
    // 150 s of real 60 ms packets, 6 s to a frame, sent as fast as the socket goes.
    const { taskId, pcm: played, warnings, peer, finish } = await opusReply();
    const encoder = new OpusEncoder(16_000);
    const [packet] = encoder.encodePcm(voiceLike(60, 16_000));
    encoder.close();
    const frame = frameOpusPackets(Array.from({ length: 100 }, () => packet!));
    const started = performance.now();
    for (let i = 0; i < 25; i++) await peer.frame(FrameType.AUDIO, taskId, frame);
    await finish();
    const elapsedMs = performance.now() - started;
    const playedMs = played().length / PCM_BYTES_PER_MS;
    expect(playedMs).toBeGreaterThanOrEqual(REPLY_AUDIO_BURST_MS);
    expect(playedMs).toBeLessThanOrEqual(REPLY_AUDIO_BURST_MS + REPLY_AUDIO_PACE * elapsedMs + 120);
    expect(playedMs).toBeLessThan(150_000);
    expect(warnings.filter((w) => /faster than it can be played/.test(w))).toHaveLength(1);
  });

  it('PCM reply audio comes with its sample rate', async () => {
    h = await startHarness();
    const turns = turnsOf(h);
    const sent = h.session.sendText('hi');
    if (!sent.ok) throw new Error(sent.message);
    await until(() => turns.length === 1, 'the text turn');
    const first = nextEvent(h.agent.events, 'audio');
    await h.sim.peer().audio(sent.taskId, voiceLike(100));
    expect(await first).toMatchObject({ sampleRate: 16_000 });
  });

  it('barge-in: a new voiceStart while a reply plays drops the old reply’s late frames', async () => {
    h = await startHarness();
    const turns = turnsOf(h);
    const a = h.session.voiceStart();
    if (!a.ok) throw new Error(a.message);
    say(h, a.taskId, voiceLike(200));
    h.session.voiceEnd(a.taskId);
    await until(() => turns.length === 1, 'the first voice turn');
    const audio: string[] = [];
    h.agent.events.on('audio', (e) => audio.push(e.taskId));
    const peer = h.sim.peer();
    const playing = nextEvent(h.agent.events, 'audio');
    await peer.audio(a.taskId, voiceLike(100));
    await playing;
    const interrupted = nextEvent(h.agent.events, 'replyInterrupted');
    const b = h.session.voiceStart();
    if (!b.ok) throw new Error(b.message);
    expect((await interrupted).taskId).toBe(a.taskId);
    const before = audio.length;
    await peer.audio(a.taskId, voiceLike(300));
    await peer.text(a.taskId, ['late words']);
    const marker = nextEvent(h.agent.events, 'audio', (e) => e.taskId === b.taskId);
    await peer.audio(b.taskId, voiceLike(40));
    await marker;
    expect(audio.slice(before).every((t) => t === b.taskId)).toBe(true);
  });
});

describe('Advent voice: hands-free', () => {
  it('mode:vad — LISTEN start, 开始监听, detecting, stop, then the reply; late chunks ignored', async () => {
    h = await startHarness({
      profile: { mode: 'vad' },
      sim: { demo: true, vadStopAfterMs: 300 },
    });
    const statuses: string[] = [];
    h.agent.events.on('status', (s) => statuses.push(s.text));
    const listens: unknown[] = [];
    h.agent.events.on('listen', (l) => listens.push(l.message));
    const stopped = nextEvent(
      h.agent.events,
      'listen',
      (l) => (l.message as { state?: string }).state === 'stop',
    );
    const done = nextEvent(h.agent.events, 'replyDone');

    const a = h.session.voiceStart();
    if (!a.ok) throw new Error(a.message);
    await until(() => framesOf(h!, a.taskId, FrameType.LISTEN).length === 1, 'LISTEN start');
    const listen = framesOf(h, a.taskId, FrameType.LISTEN)[0]!;
    expect(listen.seq).toBe(0);
    expect(listen.json).toEqual({ taskid: a.taskId, type: 'listen', state: 'start' });

    say(h, a.taskId, voiceLike(600), 1920);
    expect((await stopped).taskId).toBe(a.taskId);
    expect(h.session.voiceChunk(a.taskId, Buffer.alloc(1920))).toEqual({ ok: true, ignored: true });
    const reply = await done;
    expect(reply.taskId).toBe(a.taskId);
    expect(reply.text).toMatch(/^I heard (3\d\d) ms of audio\.$/);
    expect(statuses).toContain(LISTENING_STATUS);
    expect(listens).toEqual([
      { taskid: a.taskId, type: 'listen', state: 'detecting', mode: 'vad' },
      { taskid: a.taskId, type: 'listen', state: 'stop', mode: 'vad' },
    ]);
    expect(framesOf(h, a.taskId, FrameType.END)).toEqual([]);
    expect(h.sim.violations).toEqual([]);
  });

  it('mode:auto — audio streams with no LISTEN start and no END_FRAME; each utterance is answered', async () => {
    h = await startHarness({
      profile: { mode: 'auto', inputAudioFormat: 'opus' },
      // Only the length limit ends an utterance here (no quiet timer racing the test).
      sim: { demo: true, vadStopAfterMs: 300, vadQuietMs: 60_000 },
    });
    const replies: string[] = [];
    h.agent.events.on('replyDone', (r) => replies.push(r.text));
    const a = h.session.voiceStart();
    if (!a.ok) throw new Error(a.message);
    say(h, a.taskId, voiceLike(360), 1920);
    await until(() => replies.length === 1, 'the first answer');
    say(h, a.taskId, voiceLike(360), 1920);
    await until(() => replies.length === 2, 'the second answer');
    expect(replies.every((r) => /^I heard \d+ ms of audio\.$/.test(r))).toBe(true);
    expect(framesOf(h, a.taskId, FrameType.LISTEN)).toEqual([]);
    expect(framesOf(h, a.taskId, FrameType.END)).toEqual([]);
    expect(h.sim.violations).toEqual([]);
  });
});
