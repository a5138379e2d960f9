import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../app/contract/index.js';
import { callsPerService, latencyHistogram } from '../../renderer/features/audit/stats.js';
import { FACES } from '../../renderer/features/chat/faces.js';
import { moodKey } from '../../renderer/features/chat/mood.js';
import { en } from '../../renderer/i18n/en.js';
import { zhCN } from '../../renderer/i18n/zh-CN.js';
import { secondsUntil, summarizeParams } from '../../renderer/lib/format.js';

describe('mood', () => {
  it('maps the server keys to faces and anything unknown to neutral', () => {
    expect(moodKey('happy')).toBe('happy');
    expect(moodKey('Laughing')).toBe('laughing');
    expect(moodKey('love')).toBe('loving');
    expect(moodKey('😢')).toBe('sad');
    expect(moodKey('zzz-unknown')).toBe('neutral');
    expect(moodKey(undefined)).toBe('neutral');
    for (const k of [
      'happy',
      'laughing',
      'sad',
      'angry',
      'crying',
      'loving',
      'surprised',
      'shocked',
      'thinking',
      'embarrassed',
    ])
      expect(FACES[moodKey(k)]).not.toEqual(FACES.neutral);
  });
});

describe('activity charts', () => {
  const r = (service: string, durationMs: number) => ({ service, durationMs }) as AuditRecord;

  it('counts calls per service, most first, folding the tail', () => {
    const records = [r('a', 1), r('b', 1), r('b', 1), r('c', 1)];
    expect(callsPerService(records)).toEqual([
      { label: 'b', count: 2 },
      { label: 'a', count: 1 },
      { label: 'c', count: 1 },
    ]);
    expect(callsPerService(records, 2)).toEqual([
      { label: 'b', count: 2 },
      { label: '…', count: 2 },
    ]);
  });

  it('buckets durations', () => {
    const h = latencyHistogram([r('a', 0), r('a', 9), r('a', 10), r('a', 999), r('a', 60_000)]);
    expect(h[0]).toEqual({ label: '<10ms', count: 2 });
    expect(h[1]).toEqual({ label: '<50ms', count: 1 });
    expect(h.find((b) => b.label === '<1s')?.count).toBe(1);
    expect(h.at(-1)).toEqual({ label: '≥10s', count: 1 });
    expect(h.reduce((n, b) => n + b.count, 0)).toBe(5);
  });
});

describe('format', () => {
  it('summarizes params on one line, cutting long values', () => {
    expect(summarizeParams({ filename: 'a.txt', content: 'x'.repeat(100) })).toMatch(
      /^filename: "a\.txt", content: "x+…"$/,
    );
    expect(summarizeParams(undefined)).toBe('');
    expect(secondsUntil(10_500, 10_000)).toBe(1);
    expect(secondsUntil(0, 10_000)).toBe(0);
  });
});

type Tree = { [k: string]: string | Tree };

function flatten(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(tree)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'string') out.set(key, v);
    else for (const [kk, vv] of flatten(v, key)) out.set(kk, vv);
  }
  return out;
}

const placeholders = (s: string) => [...s.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();

describe('translations', () => {
  const a = flatten(en as unknown as Tree);
  const b = flatten(zhCN as unknown as Tree);

  it('have the same keys in English and Chinese, none empty', () => {
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [k, v] of [...a, ...b]) expect(v.trim(), k).not.toBe('');
  });

  it('use the same placeholders in both languages', () => {
    for (const [k, v] of a) expect(placeholders(b.get(k) ?? ''), k).toEqual(placeholders(v));
  });
});
