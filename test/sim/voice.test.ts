import { afterEach, describe, expect, it } from 'vitest';
import { OpusDecoder, OpusUnframer } from '../../app/audio/opus.js';
import type { Turn } from '../../sim/advent/records.js';
import { speechLike } from '../../sim/kit/tone.js';
import { VoiceInput, opusPayloads } from '../../sim/advent/voice.js';
import { FrameType, taskKey } from '../../app/wire/advent/frame.js';
import { correlation, samples, voiceLike } from '../audio/correlation.js';
import { type Harness, startHarness } from '../helpers/agent-harness.js';
import { nextEvent, until } from '../helpers/wait.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('simulator voice', () => {
  it('hears Opus uploads as PCM, under either length byte order', () => {
    const pcm = voiceLike(600);
    for (const order of ['be', 'le'] as const) {
      const input = new VoiceInput('opus', order);
      // Frames cut at odd places: a packet split across AUDIO_FRAMEs is carried over.
      const bytes = Buffer.concat(opusPayloads(pcm, order, 2));
      for (let at = 0; at < bytes.length; at += 77) input.push(bytes.subarray(at, at + 77));
      expect(input.badPackets).toBe(0);
      expect(input.ms).toBe(600);
      const { pcm: heard, raw } = input.take();
      expect(raw).toEqual(bytes);
      expect(correlation(samples(pcm), samples(heard), 400).value).toBeGreaterThan(0.8);
      input.close();
    }
  });

  it('sends reply speech as length-prefixed Opus packets that decode to the speech', () => {
    const speech = speechLike();
    const payloads = opusPayloads(speech, 'be');
    const u = new OpusUnframer('be');
    const d = new OpusDecoder(16_000);
    try {
      const pcm = Buffer.concat(payloads.flatMap((p) => u.push(p).map((x) => d.decodePacket(x))));
      expect(u.pendingBytes).toBe(0);
      expect(correlation(samples(speech), samples(pcm), 400).value).toBeGreaterThan(0.8);
    } finally {
      d.close();
    }
  });

  it('mode:vad — stops when the user goes quiet before the length limit', async () => {
    h = await startHarness({
      profile: { mode: 'vad' },
      sim: { vadStopAfterMs: 10_000, vadQuietMs: 60 },
    });
    const turns: Turn[] = [];
    h.sim.onTurn((t) => {
      turns.push(t);
    });
    const stop = nextEvent(
      h.agent.events,
      'listen',
      (l) => (l.message as { state?: string }).state === 'stop',
    );
    const a = h.session.voiceStart();
    if (!a.ok) throw new Error(a.message);
    h.session.voiceChunk(a.taskId, voiceLike(240));
    expect((await stop).taskId).toBe(a.taskId);
    await until(() => turns.length === 1, 'the turn');
    expect(turns[0]).toMatchObject({ vad: 'vad', text: '' });
    expect(turns[0]!.audio.length).toBe(240 * 32);
    // The session's voiceEnd after stop sends nothing more (no END_FRAME in vad mode).
    expect(h.session.voiceEnd(a.taskId)).toEqual({ ok: true, ignored: true });
    await new Promise((r) => setTimeout(r, 30));
    const frames = h.sim.received.filter((f) => taskKey(f.taskId) === a.taskId);
    expect(frames.some((f) => f.type === FrameType.END)).toBe(false);
    expect(h.sim.violations).toEqual([]);
  });

  it('flags LISTEN start without mode:vad in AUTH', async () => {
    h = await startHarness({ sim: { vadQuietMs: 20 } });
    // A manual-mode client that sends LISTEN start anyway is told off by the sim.
    h.session.connection.send(
      FrameType.LISTEN,
      'abcd1234',
      0,
      JSON.stringify({ taskid: 'abcd1234', type: 'listen', state: 'start' }),
    );
    await until(() => h!.sim.violations.length > 0, 'a violation');
    expect(h.sim.violations[0]).toMatch(/LISTEN start on task 'abcd1234' without mode:vad/);
  });
});
