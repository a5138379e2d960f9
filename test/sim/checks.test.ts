import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadSeqScanner, checkResult, parseAuth } from '../../sim/advent/checks.js';
import { FrameType, encodeFrame } from '../../app/wire/advent/frame.js';

describe('protocol checks', () => {
  it('splits AUTH on ## and each parameter at its first colon', () => {
    expect(parseAuth('jwt.a.b##voiceid:Chinese (Mandarin)_Wise_Women##lang:zh##x:a:b')).toEqual({
      auth: {
        token: 'jwt.a.b',
        params: { voiceid: 'Chinese (Mandarin)_Wise_Women', lang: 'zh', x: 'a:b' },
      },
      problems: [],
    });
    expect(parseAuth('##lang##lang:en##lang:zh').problems).toEqual([
      'AUTH has an empty token',
      "AUTH parameter 'lang' is not key:value",
      "AUTH parameter 'lang' is sent twice",
    ]);
  });

  it('accepts the seed result shapes and names what is missing', () => {
    expect(checkResult({ call_id: 'c', result: { success: true, data: null } })).toEqual({
      callId: 'c',
      result: { success: true, data: null },
      problems: [],
    });
    expect(checkResult({ call_id: 'c', result: { success: true } }).problems).toEqual([
      'result for c has success:true but no data',
    ]);
    expect(checkResult({ call_id: 7, result: { success: false, error: 'x' } }).problems).toEqual([
      'result has no call_id string',
    ]);
  });

  it('finds each header with a bad seq exactly once, however the stream is split', () => {
    const good = encodeFrame(FrameType.TEXT, 'task0001', 12, 'hello');
    const bad = encodeFrame(FrameType.TEXT, 'task0002', 0, 'world');
    bad.write('1x34', 16, 'latin1');
    const stream = Buffer.concat([good, bad, good, bad, good]);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 })), (cuts) => {
        const scanner = new BadSeqScanner();
        const problems: string[] = [];
        let from = 0;
        for (const cut of [...cuts].sort((a, b) => a - b)) {
          problems.push(...scanner.push(stream.subarray(from, cut)));
          from = cut;
        }
        problems.push(...scanner.push(stream.subarray(from)));
        expect(problems).toEqual([
          `frame type 4 on task 'task0002' has seq "1x34": seq must be 4 ASCII digits`,
          `frame type 4 on task 'task0002' has seq "1x34": seq must be 4 ASCII digits`,
        ]);
      }),
    );
  });
});
