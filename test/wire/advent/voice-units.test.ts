import { describe, expect, it } from 'vitest';
import { OpusEncoder, frameOpusPackets } from '../../../app/audio/opus.js';
import { ReplyAudio, VoiceUpload } from '../../../app/wire/advent/voice.js';
import { closedUploadMessage } from '../../../app/wire/kit/voice-upload.js';
import { AudioBudget } from '../../../app/wire/kit/audio-budget.js';
import { FakeClock } from '../../helpers/fake-clock.js';

describe('VoiceUpload (PCM)', () => {
  it('holds tiny chunks until 20 ms, cuts long ones at 60 ms, and flushes the rest', () => {
    const up = new VoiceUpload('task0001', 'pcm', 'be');
    expect(up.push(Buffer.alloc(320))).toEqual([]); // 10 ms: too short to send alone
    expect(up.push(Buffer.alloc(320)).map((b) => b.length)).toEqual([640]);
    expect(up.push(Buffer.alloc(5000)).map((b) => b.length)).toEqual([1920, 1920, 1160]);
    expect(up.push(Buffer.alloc(101))).toEqual([]);
    expect(up.flush().map((b) => b.length)).toEqual([100]); // whole samples only
    expect([up.seq(), up.seq()]).toEqual([0, 1]);
    up.close('ended');
    expect(up.open).toBe(false);
    expect(closedUploadMessage(up)).toMatch(/voice turn 'task0001' has ended/);
  });
});

describe('ReplyAudio (Opus down)', () => {
  it('decodes at the server rate (48 kHz here) across split frames, counting bad packets', () => {
    const enc = new OpusEncoder(48_000);
    const dec = new ReplyAudio('be', 48_000, new AudioBudget(new FakeClock()));
    try {
      const packets = enc.encodePcm(Buffer.alloc(enc.frameBytes * 2));
      const bytes = frameOpusPackets([...packets, Buffer.from([0xff, 0xff, 0xff])]);
      const a = dec.push(bytes.subarray(0, 5));
      const b = dec.push(bytes.subarray(5));
      expect(a.pcm.length + b.pcm.length).toBe(2 * 48 * 60 * 2);
      expect(a.bad + b.bad).toBe(1);
    } finally {
      enc.close();
      dec.close();
    }
  });

  it('gives no audio for packets too short to hold any, and counts them once per reply', () => {
    const enc = new OpusEncoder(16_000);
    const dec = new ReplyAudio('be', 16_000, new AudioBudget(new FakeClock()));
    try {
      const [speech] = enc.encodePcm(Buffer.alloc(enc.frameBytes));
      // A bare table of contents (20 ms) and one with a frame count (six frames, 120 ms).
      const empty = [Buffer.from([31 << 3]), Buffer.from([(31 << 3) | 3, 6])];
      const first = dec.push(frameOpusPackets([...empty, speech!]));
      const again = dec.push(frameOpusPackets(empty));
      expect(first).toMatchObject({ bad: 0, dropped: 2 });
      expect(first.pcm.length).toBe(60 * 16 * 2); // the real packet, whole
      expect(again).toMatchObject({ bad: 0, dropped: 0 });
      expect(again.pcm.length).toBe(0);
    } finally {
      enc.close();
      dec.close();
    }
  });

  it('decodes a reply no faster than its session budget allows, shared by the replies, and says so once per reply', () => {
    const clock = new FakeClock();
    // One second at once, then twice real time.
    const budget = new AudioBudget(clock, 1000, 2);
    const enc = new OpusEncoder(16_000);
    const first = new ReplyAudio('be', 16_000, budget);
    const second = new ReplyAudio('be', 16_000, budget);
    const ms = (pcm: Buffer) => pcm.length / 32;
    try {
      const [packet] = enc.encodePcm(Buffer.alloc(enc.frameBytes));
      const flood = frameOpusPackets(Array.from({ length: 50 }, () => packet!)); // 3 s
      const a = first.push(flood);
      expect(ms(a.pcm)).toBe(1020); // 17 packets: the one spending the last credit is kept whole
      expect(a.over).toBe(true);
      expect(first.push(flood)).toMatchObject({ over: false, pcm: Buffer.alloc(0) });
      // The next reply of the same session starts from what is left, and says so itself.
      const b = second.push(flood);
      expect(b).toMatchObject({ over: true, pcm: Buffer.alloc(0) });
      // Half a second later: one more second of audio.
      clock.advance(500);
      expect(ms(second.push(flood).pcm)).toBe(1020);
      // A long quiet spell refills no more than the burst.
      clock.advance(3_600_000);
      expect(ms(first.push(flood).pcm)).toBe(1020);
    } finally {
      enc.close();
      first.close();
      second.close();
    }
  });
});
