import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DecodeIssue,
  type Frame,
  FrameDecoder,
  FrameType,
  type KnownFrameType,
  ProtocolError,
  encodeFrame,
  nudgePcmMarkers,
} from '../../../app/wire/advent/frame.js';

const START = Buffer.from('##START');
const END = Buffer.from('##END');

interface Sent {
  type: KnownFrameType;
  taskId: string;
  seq: number;
  payload: Buffer;
}

function decodeAll(
  stream: Buffer,
  cuts: number[],
  maxFrameBytes?: number,
): { frames: Frame[]; issues: DecodeIssue[] } {
  const issues: DecodeIssue[] = [];
  const decoder = new FrameDecoder({ maxFrameBytes, onIssue: (i) => issues.push(i) });
  const frames: Frame[] = [];
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    frames.push(...decoder.push(stream.subarray(from, cut)));
    from = cut;
  }
  frames.push(...decoder.push(stream.subarray(from)));
  frames.push(...decoder.finish());
  return { frames, issues };
}

const plain = (f: Frame) => ({
  type: f.type,
  taskId: f.taskId,
  seq: f.seq,
  payload: Buffer.from(f.payload).toString('hex'),
});
const plainSent = (s: Sent) => ({
  type: s.type,
  taskId: s.taskId.padEnd(8, ' '),
  seq: s.seq,
  payload: s.payload.toString('hex'),
});

/** A payload holding a complete valid header is the one thing no length-less framing can carry. */
function holdsValidHeader(p: Buffer): boolean {
  for (let at = p.indexOf(START); at >= 0; at = p.indexOf(START, at + 1)) {
    if (p.length - at < 20) return false;
    const type = p[at + 7]!;
    const id = p.subarray(at + 8, at + 16);
    const seq = p.subarray(at + 16, at + 20);
    if (
      type >= 1 &&
      type <= 31 &&
      id.every((c) => c >= 0x20 && c <= 0x7e) &&
      seq.every((c) => c >= 0x30 && c <= 0x39)
    )
      return true;
  }
  return false;
}

const taskIdArb = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,6}[\x21-\x7e]$/);
const markerArb = fc.constantFrom(
  END,
  START,
  Buffer.concat([END, START]),
  Buffer.from('##EN'),
  Buffer.from('#'),
);
const binaryPayloadArb = fc
  .array(
    fc.oneof(
      fc.uint8Array({ maxLength: 64 }).map((u) => Buffer.from(u)),
      markerArb,
    ),
    { maxLength: 8 },
  )
  .map((parts) => Buffer.concat(parts))
  .filter((p) => !holdsValidHeader(p));
const textPayloadArb = fc
  .string({ unit: 'grapheme', maxLength: 40 })
  .filter((s) => !s.includes('##END'))
  .map((s) => Buffer.from(s, 'utf8'));

const frameArb: fc.Arbitrary<Sent> = fc.oneof(
  fc.record({
    type: fc.constant(FrameType.AUDIO as KnownFrameType),
    taskId: taskIdArb,
    seq: fc.integer({ min: 0, max: 9999 }),
    payload: binaryPayloadArb,
  }),
  fc.record({
    type: fc.constantFrom<KnownFrameType>(
      FrameType.TEXT,
      FrameType.MCP,
      FrameType.STATUS,
      FrameType.END,
      FrameType.EMOJI,
      FrameType.LISTEN,
    ),
    taskId: taskIdArb,
    seq: fc.integer({ min: 0, max: 9999 }),
    payload: textPayloadArb,
  }),
);

describe('frame codec', () => {
  it('round-trips any frames through any split of the stream, binary markers included', () => {
    fc.assert(
      fc.property(
        fc.array(frameArb, { minLength: 1, maxLength: 12 }).chain((frames) => {
          const stream = Buffer.concat(
            frames.map((f) => encodeFrame(f.type, f.taskId, f.seq, f.payload)),
          );
          return fc.tuple(
            fc.constant(frames),
            fc.constant(stream),
            fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, stream.length - 1) }), {
              maxLength: 20,
            }),
          );
        }),
        ([frames, stream, cuts]) => {
          const { frames: got, issues } = decodeAll(stream, cuts);
          expect(got.map(plain)).toEqual(frames.map(plainSent));
          expect(issues).toEqual([]);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('round-trips a stream fed one byte at a time', () => {
    fc.assert(
      fc.property(fc.array(frameArb, { minLength: 1, maxLength: 6 }), (frames) => {
        const stream = Buffer.concat(
          frames.map((f) => encodeFrame(f.type, f.taskId, f.seq, f.payload)),
        );
        const cuts = Array.from({ length: stream.length - 1 }, (_, i) => i + 1);
        expect(decodeAll(stream, cuts).frames.map(plain)).toEqual(frames.map(plainSent));
      }),
      { numRuns: 100 },
    );
  });

  it('resynchronises after garbage between frames and reports how much was dropped', () => {
    fc.assert(
      fc.property(
        fc.array(frameArb, { minLength: 1, maxLength: 6 }),
        fc.array(
          fc
            .uint8Array({ minLength: 1, maxLength: 30 })
            .filter((g) => !Buffer.from(g).includes('#')),
          { minLength: 6, maxLength: 6 },
        ),
        fc.uniqueArray(fc.integer({ min: 1, max: 400 }), { maxLength: 10 }),
        (frames, garbage, cuts) => {
          const parts: Buffer[] = [];
          frames.forEach((f, i) =>
            parts.push(Buffer.from(garbage[i]!), encodeFrame(f.type, f.taskId, f.seq, f.payload)),
          );
          const stream = Buffer.concat(parts);
          const { frames: got, issues } = decodeAll(
            stream,
            cuts.filter((c) => c < stream.length),
          );
          expect(got.map(plain)).toEqual(frames.map(plainSent));
          const dropped = issues
            .filter((i) => i.kind === 'garbage')
            .reduce((n, i) => n + (i.kind === 'garbage' ? i.bytes : 0), 0);
          expect(dropped).toBe(garbage.slice(0, frames.length).reduce((n, g) => n + g.length, 0));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('decodes arbitrary bytes (stray markers, bad and unknown headers) the same however they are split', () => {
    const header = fc
      .tuple(
        fc.integer({ min: 0, max: 33 }),
        fc.constantFrom('task0001', 'ab\x01defgh'),
        fc.constantFrom('0001', '12a4'),
      )
      .map(([type, id, seq]) =>
        Buffer.concat([START, Buffer.from([type]), Buffer.from(id + seq, 'latin1')]),
      );
    const bytesArb = fc
      .array(
        fc.oneof(
          fc.uint8Array({ maxLength: 30 }).map((u) => Buffer.from(u)),
          markerArb,
          header,
        ),
        { maxLength: 25 },
      )
      .map((parts) => Buffer.concat(parts));
    // Garbage may be reported in more or fewer pieces; what was dropped adds up the same.
    const outcome = (stream: Buffer, cuts: number[]) => {
      const { frames, issues } = decodeAll(stream, cuts);
      return {
        frames: frames.map(plain),
        garbage: issues.reduce((n, i) => n + (i.kind === 'garbage' ? i.bytes : 0), 0),
        others: issues.filter((i) => i.kind !== 'garbage'),
      };
    };
    fc.assert(
      fc.property(bytesArb, fc.uniqueArray(fc.nat(), { maxLength: 20 }), (stream, cuts) => {
        const whole = outcome(stream, []);
        expect(outcome(stream, [...new Set(cuts.map((c) => c % (stream.length + 1)))])).toEqual(
          whole,
        );
        const oneByOne = Array.from({ length: stream.length }, (_, i) => i + 1);
        expect(outcome(stream, oneByOne)).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it('with earlyAudio, delivers the same frames however split, an audio payload maybe in pieces', () => {
    // Consecutive pieces under one header are one audio frame cut where a `##END` ended a read.
    const merged = (
      frames: Array<{ type: number; taskId: string; seq: number; payload: Buffer }>,
    ) => {
      const out: Array<{ type: number; taskId: string; seq: number; payload: string }> = [];
      for (const f of frames) {
        const last = out.at(-1);
        const hex = Buffer.from(f.payload).toString('hex');
        if (
          f.type === FrameType.AUDIO &&
          last?.type === FrameType.AUDIO &&
          last.taskId === f.taskId &&
          last.seq === f.seq
        )
          last.payload += hex;
        else out.push({ type: f.type, taskId: f.taskId, seq: f.seq, payload: hex });
      }
      return out;
    };
    fc.assert(
      fc.property(
        fc.array(frameArb, { minLength: 1, maxLength: 12 }).chain((frames) => {
          const stream = Buffer.concat(
            frames.map((f) => encodeFrame(f.type, f.taskId, f.seq, f.payload)),
          );
          return fc.tuple(
            fc.constant(frames),
            fc.constant(stream),
            fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, stream.length - 1) }), {
              maxLength: 20,
            }),
          );
        }),
        ([frames, stream, cuts]) => {
          const decoder = new FrameDecoder({ earlyAudio: true });
          const got: Frame[] = [];
          let from = 0;
          for (const cut of [...cuts].sort((a, b) => a - b)) {
            got.push(...decoder.push(stream.subarray(from, cut)));
            from = cut;
          }
          got.push(...decoder.push(stream.subarray(from)));
          got.push(...decoder.finish());
          const sent = frames.map((f) => ({ ...f, taskId: f.taskId.padEnd(8, ' ') }));
          expect(merged(got)).toEqual(merged(sent));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('with earlyAudio, hands over an audio frame that ends a chunk at once, and the rest if its ##END was payload', () => {
    const decoder = new FrameDecoder({ earlyAudio: true });
    const audio = Buffer.concat([Buffer.from([1, 2]), END, Buffer.from([3, 4])]);
    const frame = encodeFrame(FrameType.AUDIO, 'task0001', 7, audio);
    const first = decoder.push(frame.subarray(0, 20 + 7));
    expect(first.map((f) => [f.seq, f.payload.toString('hex')])).toEqual([[7, '0102']]);
    const rest = decoder.push(frame.subarray(20 + 7));
    expect(rest.map((f) => f.payload.toString('hex'))).toEqual([
      Buffer.concat([END, Buffer.from([3, 4])]).toString('hex'),
    ]);
    // The next header closes it: nothing is delivered twice.
    expect(decoder.push(encodeFrame(FrameType.END, 'task0001', 8))).toHaveLength(1);
    expect(decoder.flush()).toEqual([]);
  });

  it('delivers a text frame that ends a chunk at once, without waiting for more bytes', () => {
    const decoder = new FrameDecoder();
    const got = decoder.push(encodeFrame(FrameType.END, 'abcd1234', 1));
    expect(got).toHaveLength(1);
    expect(got[0]!.type).toBe(FrameType.END);
  });

  it('holds an audio frame whose ##END ends the chunk until the next bytes or a flush decide', () => {
    const decoder = new FrameDecoder();
    const audio = Buffer.concat([Buffer.from([1, 2]), END, Buffer.from([3, 4])]);
    const frame = encodeFrame(FrameType.AUDIO, 'task0001', 0, audio);
    expect(decoder.push(frame)).toEqual([]);
    expect(decoder.hasTentative).toBe(true);
    const flushed = decoder.flush();
    expect(flushed).toHaveLength(1);
    expect(Buffer.compare(flushed[0]!.payload, audio)).toBe(0);
    expect(decoder.buffered).toBe(0);
  });

  it('delivers a held audio frame as soon as the next header is whole, however slowly it arrives', () => {
    const audio = Buffer.concat([Buffer.from([1, 2]), END, Buffer.from([3, 4])]);
    const next = encodeFrame(FrameType.TEXT, 'task0001', 1, 'hi');
    const stream = Buffer.concat([encodeFrame(FrameType.AUDIO, 'task0001', 0, audio), next]);
    const headerWhole = stream.length - next.length + 20;
    const decoder = new FrameDecoder();
    const got: Frame[] = [];
    for (let i = 0; i < headerWhole; i++) got.push(...decoder.push(stream.subarray(i, i + 1)));
    expect(got.map((f) => Buffer.from(f.payload).toString('hex'))).toEqual([audio.toString('hex')]);
    expect(decoder.hasTentative).toBe(false);
  });

  it('skips frames of unknown types and reports them, keeping the frames around them', () => {
    const unknown = Buffer.concat([
      START,
      Buffer.from([12]),
      Buffer.from('task0001' + '0000'),
      Buffer.from('future'),
      END,
    ]);
    const stream = Buffer.concat([
      encodeFrame(FrameType.TEXT, 'task0001', 0, 'a'),
      unknown,
      encodeFrame(FrameType.END, 'task0001', 1),
    ]);
    const { frames, issues } = decodeAll(stream, [3, 30, 31]);
    expect(frames.map((f) => f.type)).toEqual([FrameType.TEXT, FrameType.END]);
    expect(issues).toEqual([
      { kind: 'unknown_type', type: 12, taskId: 'task0001', bytes: unknown.length },
    ]);
  });

  it('rejects a frame above the maximum without buffering it, then carries on', () => {
    const issues: DecodeIssue[] = [];
    const decoder = new FrameDecoder({ maxFrameBytes: 1024, onIssue: (i) => issues.push(i) });
    const big = encodeFrame(FrameType.TEXT, 'big00001', 0, 'x'.repeat(100_000));
    let maxBuffered = 0;
    const frames: Frame[] = [];
    for (let i = 0; i < big.length; i += 997) {
      frames.push(...decoder.push(big.subarray(i, i + 997)));
      maxBuffered = Math.max(maxBuffered, decoder.buffered);
    }
    frames.push(...decoder.push(encodeFrame(FrameType.TEXT, 'ok000001', 0, 'after')));
    expect(issues.filter((i) => i.kind === 'frame_too_large')).toHaveLength(1);
    expect(maxBuffered).toBeLessThan(3 * 1024);
    expect(frames.map((f) => f.payload.toString())).toEqual(['after']);
  });

  it('stays bounded when fed one byte at a time: an oversized frame and a garbage flood', () => {
    const issues: DecodeIssue[] = [];
    const decoder = new FrameDecoder({ maxFrameBytes: 1024, onIssue: (i) => issues.push(i) });
    let maxBuffered = 0;
    const feed = (bytes: Buffer) => {
      const frames: Frame[] = [];
      for (let i = 0; i < bytes.length; i++) {
        frames.push(...decoder.push(bytes.subarray(i, i + 1)));
        maxBuffered = Math.max(maxBuffered, decoder.buffered);
      }
      return frames;
    };
    feed(encodeFrame(FrameType.TEXT, 'big00001', 0, 'x'.repeat(20_000)));
    expect(issues.filter((i) => i.kind === 'frame_too_large')).toHaveLength(1);
    feed(Buffer.alloc(50_000, 0x41)); // no '#', no 'D' or 'T' completing a marker
    const after = feed(encodeFrame(FrameType.TEXT, 'ok000001', 0, 'after'));
    expect(after.map((f) => f.payload.toString())).toEqual(['after']);
    expect(maxBuffered).toBeLessThan(6 * 1024);
  });

  it('stays bounded when an oversized binary frame arrives one byte at a time', () => {
    const issues: DecodeIssue[] = [];
    const decoder = new FrameDecoder({ maxFrameBytes: 1024, onIssue: (i) => issues.push(i) });
    // Markers in the payload keep the decoder looking for the frame's end all the way.
    const payload = Buffer.concat(
      Array.from({ length: 400 }, () => Buffer.from('ab##END##STARTx')),
    );
    const stream = Buffer.concat([
      encodeFrame(FrameType.AUDIO, 'big00001', 0, payload),
      encodeFrame(FrameType.TEXT, 'ok000001', 0, 'after'),
    ]);
    let maxBuffered = 0;
    const frames: Frame[] = [];
    for (let i = 0; i < stream.length; i++) {
      frames.push(...decoder.push(stream.subarray(i, i + 1)));
      maxBuffered = Math.max(maxBuffered, decoder.buffered);
    }
    expect(issues.map((i) => i.kind)).toEqual(['frame_too_large']);
    expect(maxBuffered).toBeLessThan(3 * 1024);
    expect(frames.map((f) => f.payload.toString())).toEqual(['after']);
  });

  it('rejects an oversized binary frame too', () => {
    const issues: DecodeIssue[] = [];
    const decoder = new FrameDecoder({ maxFrameBytes: 512, onIssue: (i) => issues.push(i) });
    const frames = decoder.push(
      Buffer.concat([
        encodeFrame(FrameType.AUDIO, 'a0000001', 0, Buffer.alloc(4000, 7)),
        encodeFrame(FrameType.END, 'a0000001', 1),
      ]),
    );
    expect(issues.map((i) => i.kind)).toEqual(['frame_too_large']);
    expect(frames.map((f) => f.type)).toEqual([FrameType.END]);
  });

  it('reports a frame cut off by the end of the stream as truncated', () => {
    const issues: DecodeIssue[] = [];
    const decoder = new FrameDecoder({ onIssue: (i) => issues.push(i) });
    decoder.push(encodeFrame(FrameType.TEXT, 'abcd1234', 0, 'hello').subarray(0, 26));
    expect(decoder.finish()).toEqual([]);
    expect(issues).toEqual([{ kind: 'truncated', bytes: 26 }]);
  });

  it('treats a ##START with an invalid header as garbage', () => {
    const bogus = Buffer.from('##START\x04bad\x00id!!0000xx');
    const { frames, issues } = decodeAll(
      Buffer.concat([bogus, encodeFrame(FrameType.TEXT, 'abcd1234', 0, 'hi')]),
      [],
    );
    expect(frames.map((f) => f.payload.toString())).toEqual(['hi']);
    expect(issues).toEqual([{ kind: 'garbage', bytes: bogus.length }]);
  });

  it('decodes the seed example byte for byte', () => {
    const wire = Buffer.from(
      '##START\x04task12340000What time is it?##END##START\x03task12340001##END',
      'latin1',
    );
    const { frames } = decodeAll(wire, []);
    expect(frames.map((f) => [f.type, f.taskId, f.seq, f.payload.toString()])).toEqual([
      [4, 'task1234', 0, 'What time is it?'],
      [3, 'task1234', 1, ''],
    ]);
    expect(
      Buffer.concat([
        encodeFrame(4, 'task1234', 0, 'What time is it?'),
        encodeFrame(3, 'task1234', 1),
      ]).equals(wire),
    ).toBe(true);
  });

  it('encodes strictly: short task ids are padded, bad ids, seqs and text markers are refused', () => {
    expect(encodeFrame(FrameType.MCP, 'mcp1', 0, '{}').subarray(8, 16).toString()).toBe('mcp1    ');
    expect(() => encodeFrame(FrameType.TEXT, 'toolong12', 0)).toThrow(ProtocolError);
    expect(() => encodeFrame(FrameType.TEXT, 'tab\tid', 0)).toThrow(ProtocolError);
    expect(() => encodeFrame(FrameType.TEXT, 'abcd1234', 10000)).toThrow(ProtocolError);
    expect(() => encodeFrame(FrameType.TEXT, 'abcd1234', 0, 'a ##END b')).toThrow(/cannot contain/);
  });
});

describe('PCM marker nudge', () => {
  it('removes every marker by moving one sample by one LSB, leaving the rest untouched', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.uint8Array({ maxLength: 40 }).map((u) => Buffer.from(u)),
            markerArb,
          ),
          { maxLength: 10 },
        ),
        fc.boolean(),
        (parts, odd) => {
          const raw = Buffer.concat(parts);
          const pcm = raw.length % 2 ? Buffer.concat([raw, Buffer.from([0])]) : raw;
          // Also place the samples at an odd byte offset inside a bigger buffer.
          const host = Buffer.alloc(pcm.length + 1);
          pcm.copy(host, odd ? 1 : 0);
          const view = host.subarray(odd ? 1 : 0, (odd ? 1 : 0) + pcm.length);
          const out = Buffer.from(nudgePcmMarkers(view));
          expect(out.includes(END)).toBe(false);
          expect(out.includes(START)).toBe(false);
          for (let i = 0; i + 1 < pcm.length; i += 2) {
            const diff = Math.abs(out.readInt16LE(i) - pcm.readInt16LE(i));
            expect(diff).toBeLessThanOrEqual(1);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('returns the same buffer when there is nothing to change', () => {
    const pcm = Buffer.from([1, 2, 3, 4]);
    expect(nudgePcmMarkers(pcm)).toBe(pcm);
  });
});
