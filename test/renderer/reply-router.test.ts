import { describe, expect, it } from 'vitest';
import { encodeAudioFrame } from '../../app/contract/index.js';
import { ReplyRouter } from '../../renderer/audio/reply-router.js';
import type { DirectNotice } from '../../renderer/bridge/worker-messages.js';

type Posted = { type: 'push'; data: Float32Array; src: number } | { type: 'flush' };

/** A player port that keeps what reached it, and the first sample of each push to tell them apart. */
function player() {
  const got: Posted[] = [];
  return {
    got,
    port: { postMessage: (m: unknown) => void got.push(m as Posted) },
    /** The pushes' first samples (×1000, rounded) and the flushes, in order. */
    seen: () => got.map((m) => (m.type === 'flush' ? 'flush' : Math.round(m.data[0]! * 1000))),
  };
}

/** 20 ms of 16 kHz audio whose samples all read `level` (as a value ×1000 once played). */
function frame(taskId: string, level: number, sampleRate = 16_000): ArrayBuffer {
  const pcm = new Int16Array(sampleRate / 50).fill(Math.round((level / 1000) * 32768));
  const bytes = encodeAudioFrame({
    connection: { id: 'c', name: 'c' },
    taskId,
    seq: 0,
    sampleRate,
    pcm: pcm.buffer,
  } as never);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

function pcmOf(level: number): ArrayBuffer {
  return new Int16Array(320).fill(Math.round((level / 1000) * 32768)).buffer;
}

function router() {
  const told: DirectNotice[] = [];
  const r = new ReplyRouter({ played: (n) => told.push(n), now: () => 0 });
  return { r, told };
}

describe('reply router (reply audio off the main thread)', () => {
  it('plays the approved reply straight to the player, in order, and tells the page what it played', () => {
    const { r, told } = router();
    const p = player();
    r.attachPlayer(p.port, 16_000);
    r.policy({ taskId: 't1', listening: false });
    expect(r.fromSocket(frame('t1', 100))).toEqual({ played: true });
    expect(r.fromSocket(frame('t1', 200))).toEqual({ played: true });
    expect(p.seen()).toEqual([100, 200]);
    expect(told.map((n) => [n.taskId, n.samples, n.superseded])).toEqual([
      ['t1', 320, undefined],
      ['t1', 320, undefined],
    ]);
  });

  it("converts to the output's rate on the way", () => {
    const { r } = router();
    const p = player();
    r.attachPlayer(p.port, 48_000);
    r.policy({ taskId: 't1', listening: false });
    r.fromSocket(frame('t1', 100));
    const push = p.got[0] as Extract<Posted, { type: 'push' }>;
    expect(push.src).toBe(320);
    expect(Math.abs(push.data.length - 960)).toBeLessThanOrEqual(3);
  });

  it("keeps a reply's order when some of it went to the page: later frames wait until the page has handled it", () => {
    const { r } = router();
    const p = player();
    r.attachPlayer(p.port, 16_000);
    r.policy({ taskId: 't0', listening: true });
    // While the user talks, another reply is the page's to decide.
    expect(r.fromSocket(frame('t1', 100))).toEqual({ played: false, taskId: 't1' });
    // The page approves it; a frame arriving before the page's answer still goes its way.
    r.policy({ taskId: 't1', listening: false });
    expect(r.fromSocket(frame('t1', 200))).toEqual({ played: false, taskId: 't1' });
    r.push('t1', 16_000, pcmOf(100));
    r.handled('t1');
    r.push('t1', 16_000, pcmOf(200));
    r.handled('t1');
    expect(r.fromSocket(frame('t1', 300))).toEqual({ played: true });
    expect(p.seen()).toEqual([100, 200, 300]);
  });

  it('a reply nobody announced takes over when the user is not talking: flush, then its audio; the one it replaced stays interrupted', () => {
    const { r, told } = router();
    const p = player();
    r.attachPlayer(p.port, 16_000);
    r.policy({ taskId: 'old', listening: false });
    r.fromSocket(frame('old', 100));
    expect(r.fromSocket(frame('new', 200))).toEqual({ played: true });
    expect(p.seen()).toEqual([100, 'flush', 200]);
    expect(told.at(-1)?.superseded).toEqual({ previous: 'old' });
    // The old reply's late audio is the page's to drop, never played here.
    expect(r.fromSocket(frame('old', 300))).toEqual({ played: false, taskId: 'old' });
    expect(p.seen()).toEqual([100, 'flush', 200]);
  });

  it('an interrupted reply, or another reply while the user talks, goes to the page', () => {
    const { r } = router();
    const p = player();
    r.attachPlayer(p.port, 16_000);
    r.policy({ taskId: undefined, listening: false, block: 'cut' });
    expect(r.fromSocket(frame('cut', 100)).played).toBe(false);
    r.handled('cut');
    r.policy({ taskId: 'mine', listening: true });
    expect(r.fromSocket(frame('other', 100)).played).toBe(false);
    r.handled('other');
    // The reply approved plays even while the user talks, as the page would play it.
    expect(r.fromSocket(frame('mine', 100)).played).toBe(true);
    expect(p.seen()).toEqual([100]);
  });

  it('before the player exists, everything goes to the page, and what the page plays is held, then played in order', () => {
    const { r } = router();
    r.policy({ taskId: 't1', listening: false });
    expect(r.fromSocket(frame('t1', 100)).played).toBe(false);
    r.push('t1', 16_000, pcmOf(100));
    r.handled('t1');
    r.push('t1', 16_000, pcmOf(200));
    const p = player();
    r.attachPlayer(p.port, 16_000);
    expect(r.fromSocket(frame('t1', 300)).played).toBe(true);
    expect(p.seen()).toEqual([100, 200, 300]);
  });

  it('holds a bounded amount for a player that never comes, and a flush drops what it holds', () => {
    const r = new ReplyRouter({ played: () => {}, now: () => 0, maxHeldMs: 100 });
    for (let i = 0; i < 20; i++) r.push('t1', 16_000, pcmOf(i));
    const p = player();
    r.attachPlayer(p.port, 16_000);
    // 100 ms of 20 ms chunks: the latest five.
    expect(p.seen()).toEqual([15, 16, 17, 18, 19]);
    const q = new ReplyRouter({ played: () => {}, now: () => 0 });
    q.push('t1', 16_000, pcmOf(1));
    q.flush();
    const p2 = player();
    q.attachPlayer(p2.port, 16_000);
    expect(p2.seen()).toEqual([]);
  });

  it('a flush reaches the player after everything posted before it', () => {
    const { r } = router();
    const p = player();
    r.attachPlayer(p.port, 16_000);
    r.policy({ taskId: 't1', listening: false });
    r.fromSocket(frame('t1', 100));
    r.push('t1', 16_000, pcmOf(200));
    r.policy({ taskId: undefined, listening: true, block: 't1' });
    r.flush();
    expect(r.fromSocket(frame('t1', 300)).played).toBe(false);
    expect(p.seen()).toEqual([100, 200, 'flush']);
  });

  it('frames it cannot read go to the page as they are', () => {
    const { r } = router();
    r.attachPlayer(player().port, 16_000);
    expect(r.fromSocket(new Uint8Array([0, 0, 0, 9, 1]).buffer)).toEqual({ played: false });
  });
});
