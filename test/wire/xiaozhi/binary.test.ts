import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BinaryFrameError,
  V2_HEADER_BYTES,
  V3_HEADER_BYTES,
  V3_MAX_PAYLOAD,
  decodeAudioFrame,
  encodeAudioFrame,
} from '../../../app/wire/xiaozhi/binary.js';

const payloads = fc.uint8Array({ maxLength: 2000 });

describe('XiaoZhi binary audio frames', () => {
  it('version 1 is the raw packet, both ways', () => {
    fc.assert(
      fc.property(payloads, (p) => {
        const frame = encodeAudioFrame(1, p);
        expect([...frame]).toEqual([...p]);
        expect([...decodeAudioFrame(1, frame).payload]).toEqual([...p]);
      }),
    );
  });

  it('version 2 round-trips type, timestamp and payload behind a 16-byte big-endian header', () => {
    fc.assert(
      fc.property(
        payloads,
        fc.integer({ min: 0, max: 1 }),
        fc.integer({ min: 0, max: 0xffff_ffff }),
        (p, type, ts) => {
          const frame = encodeAudioFrame(2, p, { type, timestampMs: ts });
          expect(frame.length).toBe(V2_HEADER_BYTES + p.length);
          expect(frame.readUInt16BE(0)).toBe(2);
          expect(frame.readUInt32BE(12)).toBe(p.length);
          const back = decodeAudioFrame(2, frame);
          expect(back.type).toBe(type);
          expect(back.timestampMs).toBe(ts);
          expect([...back.payload]).toEqual([...p]);
        },
      ),
    );
  });

  it('version 3 round-trips type and payload behind a 4-byte big-endian header', () => {
    fc.assert(
      fc.property(payloads, fc.integer({ min: 0, max: 1 }), (p, type) => {
        const frame = encodeAudioFrame(3, p, { type });
        expect(frame.length).toBe(V3_HEADER_BYTES + p.length);
        expect(frame.readUInt8(0)).toBe(type);
        expect(frame.readUInt16BE(2)).toBe(p.length);
        const back = decodeAudioFrame(3, frame);
        expect(back.type).toBe(type);
        expect([...back.payload]).toEqual([...p]);
      }),
    );
  });

  it('lays out the documented header fields exactly', () => {
    const v2 = encodeAudioFrame(2, Buffer.from([0xaa, 0xbb]), { timestampMs: 0x01020304 });
    expect(v2.toString('hex')).toBe(
      '0002' + '0000' + '00000000' + '01020304' + '00000002' + 'aabb',
    );
    const v3 = encodeAudioFrame(3, Buffer.from([0xaa, 0xbb, 0xcc]));
    expect(v3.toString('hex')).toBe('00' + '00' + '0003' + 'aabbcc');
  });

  it('refuses a frame shorter than its header, saying how long the header must be', () => {
    fc.assert(
      fc.property(fc.constantFrom(2 as const, 3 as const), fc.nat(), (version, n) => {
        const header = version === 2 ? V2_HEADER_BYTES : V3_HEADER_BYTES;
        const frame = Buffer.alloc(n % header);
        expect(() => decodeAudioFrame(version, frame)).toThrow(BinaryFrameError);
        expect(() => decodeAudioFrame(version, frame)).toThrow(
          new RegExp(`v${version} audio frame needs a ${header}-byte header`),
        );
      }),
    );
  });

  it('refuses a frame whose header claims more payload than it carries (truncated)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(2 as const, 3 as const),
        fc.uint8Array({ minLength: 1, maxLength: 500 }),
        fc.integer({ min: 1, max: 500 }),
        (version, p, cut) => {
          const frame = encodeAudioFrame(version, p);
          const short = frame.subarray(0, frame.length - Math.min(cut, p.length));
          expect(() => decodeAudioFrame(version, short)).toThrow(/truncated/);
        },
      ),
    );
  });

  it('refuses a frame carrying more than its header says, naming a version mismatch', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(2 as const, 3 as const),
        payloads,
        fc.uint8Array({ minLength: 1, maxLength: 50 }),
        (version, p, extra) => {
          const frame = Buffer.concat([encodeAudioFrame(version, p), extra]);
          expect(() => decodeAudioFrame(version, frame)).toThrow(/disagree on Protocol-Version/);
        },
      ),
    );
  });

  it('refuses a v2 header naming another version', () => {
    const frame = encodeAudioFrame(2, Buffer.from([1, 2, 3]));
    frame.writeUInt16BE(3, 0);
    expect(() => decodeAudioFrame(2, frame)).toThrow(/says version 3/);
  });

  it('will not build a header that cannot express the frame', () => {
    expect(() => encodeAudioFrame(3, Buffer.alloc(V3_MAX_PAYLOAD + 1))).toThrow(
      /at most 65535 payload bytes/,
    );
    expect(encodeAudioFrame(3, Buffer.alloc(V3_MAX_PAYLOAD)).readUInt16BE(2)).toBe(V3_MAX_PAYLOAD);
    expect(() => encodeAudioFrame(1, Buffer.alloc(3), { type: 1 })).toThrow(/only Opus/);
    expect(() => encodeAudioFrame(3, Buffer.alloc(3), { type: 256 })).toThrow(/8 bits/);
    expect(() => encodeAudioFrame(2, Buffer.alloc(3), { timestampMs: -1 })).toThrow(/non-negative/);
  });

  it('wraps a v2 timestamp past 2^32 ms as the 32-bit field does', () => {
    const frame = encodeAudioFrame(2, Buffer.alloc(1), { timestampMs: 0x1_0000_0005 });
    expect(decodeAudioFrame(2, frame).timestampMs).toBe(5);
  });
});
