import { describe, expect, it } from 'vitest';
import {
  OpusDecoder,
  OpusEncoder,
  OpusUnframer,
  frameOpusPackets,
  unframeOpus,
} from '../../app/audio/opus.js';
import { correlation, samples, voiceLike } from './correlation.js';

describe('Opus wrapper', () => {
  it('round-trips a voice-like signal in 60 ms packets, chunked at odd sizes', () => {
    const pcm = voiceLike(1200);
    const enc = new OpusEncoder();
    const dec = new OpusDecoder();
    try {
      const packets: Buffer[] = [];
      // 20 ms, 33 ms, 7 bytes…: partial frames are buffered across calls.
      const sizes = [640, 1056, 7, 1921, 3];
      for (let at = 0, i = 0; at < pcm.length; i++) {
        const size = sizes[i % sizes.length]!;
        packets.push(...enc.encodePcm(pcm.subarray(at, at + size)));
        at += size;
      }
      expect(packets).toHaveLength(20);
      packets.push(...enc.flush());
      const out = Buffer.concat(packets.map((p) => dec.decodePacket(p)));
      expect(out.length).toBe(packets.length * 1920);
      const c = correlation(samples(pcm), samples(out), 400);
      expect(c.value).toBeGreaterThanOrEqual(0.9);
    } finally {
      enc.close();
      dec.close();
    }
  });

  it('pads the last partial frame with silence on flush, and is empty when nothing waits', () => {
    const enc = new OpusEncoder();
    try {
      expect(enc.encodePcm(Buffer.alloc(1000))).toEqual([]);
      expect(enc.flush()).toHaveLength(1);
      expect(enc.flush()).toEqual([]);
    } finally {
      enc.close();
    }
    expect(() => enc.encodePcm(Buffer.alloc(2))).toThrow(/closed/);
  });

  it('decodes at 24 kHz and 48 kHz', () => {
    for (const rate of [24_000, 48_000] as const) {
      const enc = new OpusEncoder(rate);
      const dec = new OpusDecoder(rate);
      try {
        const [packet] = enc.encodePcm(Buffer.alloc(enc.frameBytes));
        expect(dec.decodePacket(packet!).length).toBe((rate * 60 * 2) / 1000);
      } finally {
        enc.close();
        dec.close();
      }
    }
  });
});

describe('Opus framing', () => {
  const packets = [Buffer.from([1, 2, 3]), Buffer.alloc(0), Buffer.alloc(300, 7), Buffer.from([9])];

  it('prefixes each packet with its 2-byte length, big-endian by default or little-endian', () => {
    const be = frameOpusPackets(packets);
    expect([...be.subarray(0, 5)]).toEqual([0, 3, 1, 2, 3]);
    expect(be.readUInt16BE(7)).toBe(300);
    const le = frameOpusPackets(packets, 'le');
    expect([...le.subarray(0, 5)]).toEqual([3, 0, 1, 2, 3]);
    expect(unframeOpus(le, 'le').packets).toEqual(packets);
    expect(unframeOpus(be).packets).toEqual(packets);
  });

  it('reassembles packets split across AUDIO_FRAMEs at every byte', () => {
    for (const order of ['be', 'le'] as const) {
      const bytes = frameOpusPackets(packets, order);
      for (let cut = 0; cut <= bytes.length; cut++) {
        const u = new OpusUnframer(order);
        const got = [...u.push(bytes.subarray(0, cut)), ...u.push(bytes.subarray(cut))];
        expect(got).toEqual(packets);
        expect(u.pendingBytes).toBe(0);
      }
      // And one byte at a time, through the functional helper's carried state.
      let state = new OpusUnframer(order);
      const got: Buffer[] = [];
      for (const b of bytes) {
        const r = unframeOpus(Buffer.from([b]), order, state);
        got.push(...r.packets);
        state = r.state;
      }
      expect(got).toEqual(packets);
    }
  });

  it('keeps the bytes it carries when the socket reuses the chunk it read them from', () => {
    const big = Buffer.alloc(3000, 0x5a);
    const bytes = frameOpusPackets([big, packets[0]!]);
    const u = new OpusUnframer();
    const got: Buffer[] = [];
    // A reused read buffer: every piece is written into the same memory, pushed, then overwritten.
    const chunk = Buffer.alloc(7);
    for (let at = 0; at < bytes.length; at += chunk.length) {
      const n = bytes.copy(chunk, 0, at, at + chunk.length);
      got.push(...u.push(chunk.subarray(0, n)));
      chunk.fill(0xff);
    }
    expect(got).toEqual([big, packets[0]]);
    expect(u.pendingBytes).toBe(0);
  });
});
