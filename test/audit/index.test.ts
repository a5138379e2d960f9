import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MonthWriter, nodeIo } from '../../app/audit/append.js';
import { GENESIS_HASH, recordHash, type UnhashedRecord } from '../../app/audit/chain.js';
import { listMonthFiles, readMonthFile } from '../../app/audit/files.js';
import { MonthReader, runSync, scanLines } from '../../app/audit/lines.js';
import type { AuditLog } from '../../app/audit/log.js';
import { DEFAULT_LIMIT, MAX_LIMIT, RECENT_RECORDS, RecordIndex } from '../../app/audit/query.js';
import { canonicalJson, sha256Hex } from '../../app/audit/redact.js';
import type {
  AuditEntry,
  AuditPage,
  AuditQuery,
  AuditRecord,
  Decision,
  Outcome,
} from '../../app/contract/audit.js';
import { entry, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();

/**
 * Every object reachable from `root` through properties, arrays, maps and sets (not through
 * closures, which the log does not use for records): how many look like audit records, and the
 * longest array met.
 */
function reachable(root: unknown): { records: number; longestArray: number } {
  const seen = new Set<object>();
  const stack: unknown[] = [root];
  let records = 0;
  let longestArray = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) continue;
    if (Array.isArray(value)) longestArray = Math.max(longestArray, value.length);
    if (value instanceof Map) for (const [k, v] of value) stack.push(k, v);
    if (value instanceof Set) for (const v of value) stack.push(v);
    if ('hash' in value && 'prevHash' in value && 'seq' in value) records += 1;
    for (const key of Reflect.ownKeys(value))
      stack.push((value as Record<PropertyKey, unknown>)[key]);
  }
  return { records, longestArray };
}

describe('AuditLog memory', () => {
  it('keeps a compact index, not the records, over 100 000 appends and after a reopen', async () => {
    const dir = await tempDir();
    const clock = manualClock('2026-11-15T10:00:00Z');
    const log = await openLog({ dir, clock });
    const total = 100_000;
    const wave = 1000;
    let atHalf = 0;
    for (let done = 0; done < total; done += wave) {
      await Promise.all(
        Array.from({ length: wave }, (_, i) =>
          log.append(
            entry({
              callId: `call-${done + i}`,
              service: ['create_file', 'list_files', 'get_current_time'][i % 3] as string,
              params: { path: `notes/file-${done + i}.txt` },
            }),
          ),
        ),
      );
      if (done + wave === total / 2) atHalf = log.memoryBytes();
    }
    const check = (l: AuditLog): void => {
      expect(l.stats().records).toBe(total);
      // A few dozen bytes per record at most…
      expect(l.memoryBytes() - atHalf).toBeLessThan((total / 2) * 40);
      // …and a few MB in all, the bounded cache of recent records included.
      expect(l.memoryBytes()).toBeLessThan(6 * 2 ** 20);
      const held = reachable(l);
      expect(held.records).toBeLessThanOrEqual(RECENT_RECORDS);
      expect(held.longestArray).toBeLessThanOrEqual(RECENT_RECORDS);
    };
    check(log);
    await log.close();

    const reopened = await openLog({ dir, clock });
    check(reopened);
    const page = await reopened.query({ offset: 60_000, limit: 3 });
    expect(page.records.map((r) => r.callId)).toEqual(['call-39999', 'call-39998', 'call-39997']);
    expect((await reopened.query({ text: 'FILE-4242.TXT' })).records.map((r) => r.seq)).toEqual([
      4243,
    ]);
    expect(await reopened.verify()).toMatchObject({ ok: true, records: total });
  }, 120_000);
});

describe('Reading records back by offset', () => {
  it('places each line where it was written, after a torn fragment too', async () => {
    const dir = await tempDir();
    const path = join(dir, '2026-11.jsonl');
    await writeFile(path, '{"seq":1,"ts":"torn'); // no newline: the next write starts with one
    const writer = new MonthWriter(nodeIo);
    const lines = ['{"a":"é😀"}\n', '{"b":2}\n', '{"c":"\\"q\\""}\n'];
    const first = await writer.append(path, lines.slice(0, 2));
    const second = await writer.append(path, lines.slice(2));
    await writer.close();

    const bytes = await readFile(path);
    const offsets = [...first.offsets, ...second.offsets];
    const lengths = [...first.lengths, ...second.lengths];
    lines.forEach((line, k) => {
      const at = offsets[k] as number;
      expect(bytes.subarray(at, at + (lengths[k] as number)).toString('utf8')).toBe(
        line.slice(0, -1),
      );
    });
    expect(offsets[0]).toBe(Buffer.byteLength('{"seq":1,"ts":"torn\n'));
  });

  it('scans lines with their byte offsets, a line longer than the read buffer included', async () => {
    const dir = await tempDir();
    const path = join(dir, 'lines');
    const lines = ['é😀', '', 'x'.repeat(3 * 2 ** 20 + 7), '{"a":1}', 'last, no newline'];
    await writeFile(path, lines.join('\n'));
    const seen: [string, number, number][] = [];
    await scanLines(path, (text, offset, length) => seen.push([text, offset, length]));
    let offset = 0;
    expect(seen).toEqual(
      lines.map((line) => {
        const length = Buffer.byteLength(line);
        const at = offset;
        offset += length + 1;
        return [line, at, length];
      }),
    );
  });

  it('reads the records of the index back from the month files, beyond the recent ones', async () => {
    const dir = await tempDir();
    const path = join(dir, '2026-11.jsonl');
    const writer = new MonthWriter(nodeIo);
    const index = new RecordIndex();
    const file = index.fileId(path);
    const records = chain(
      Array.from({ length: RECENT_RECORDS + 500 }, (_, i) => ({ callId: `r${i}` })),
    );
    for (let k = 0; k < records.length; k += 300) {
      const part = records.slice(k, k + 300);
      const placed = await writer.append(
        path,
        part.map((r) => `${JSON.stringify(r)}\n`),
      );
      part.forEach((r, m) =>
        index.push(r, file, placed.offsets[m] as number, placed.lengths[m] as number, true),
      );
    }
    await writer.close();
    const back = runSync(index.select({ order: 'asc' }), new MonthReader(index.paths));
    expect(back).toEqual(records);
  });
});

/** `overrides` as records chained from genesis, with every field the filters use varied. */
function chain(overrides: Partial<UnhashedRecord>[]): AuditRecord[] {
  let prevHash = GENESIS_HASH;
  return overrides.map((o, i) => {
    const params = o.params ?? { path: `dir/file-${i}.txt` };
    const unhashed: UnhashedRecord = {
      seq: i + 1,
      ts: new Date(Date.UTC(2026, 9, 1) + i * 60_000).toISOString(),
      connection: 'home',
      dialect: 'advent',
      callId: `call-${i}`,
      service: 'list_files',
      params,
      paramsSha256: sha256Hex(canonicalJson(params)),
      decision: 'auto',
      outcome: 'ok',
      durationMs: i % 5,
      prevHash,
      ...o,
    };
    const record = { ...unhashed, hash: recordHash(unhashed) };
    prevHash = record.hash;
    return record;
  });
}

/** The query semantics of the in-memory index this one replaced, over records in log order. */
function reference(
  records: readonly AuditRecord[],
  q: AuditQuery,
): { page: AuditPage; all: AuditRecord[] } {
  const clamp = (v: number | undefined, fallback: number, min: number, max: number): number =>
    v === undefined || !Number.isFinite(v) ? fallback : Math.min(max, Math.max(min, Math.floor(v)));
  const from = q.from ? Date.parse(q.from) : undefined;
  const to = q.to ? Date.parse(q.to) : undefined;
  const needle = q.text ? q.text.toLowerCase() : '';
  const all = records.filter((r) => {
    if (q.service !== undefined && r.service !== q.service) return false;
    if (q.decision !== undefined && r.decision !== q.decision) return false;
    if (q.outcome !== undefined && r.outcome !== q.outcome) return false;
    if (q.connection !== undefined && r.connection !== q.connection) return false;
    if (from !== undefined || to !== undefined) {
      const t = Date.parse(r.ts);
      if (Number.isNaN(t)) return false;
      if (from !== undefined && t < from) return false;
      if (to !== undefined && t > to) return false;
    }
    if (needle !== '') {
      const hay = [
        r.service,
        r.callId,
        r.connection,
        r.message ?? '',
        r.error ?? '',
        JSON.stringify(r.params) ?? '',
      ]
        .join('\u0000')
        .toLowerCase();
      if (!hay.includes(needle)) return false;
    }
    return true;
  });
  if (q.order !== 'asc') all.reverse();
  const offset = clamp(q.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const limit = clamp(q.limit, DEFAULT_LIMIT, 0, MAX_LIMIT);
  return { page: { total: all.length, records: all.slice(offset, offset + limit) }, all };
}

const SERVICES = ['create_file', 'list_files', 'get_current_time', 'delete_file'];
const CONNECTIONS = ['home', 'office', 'Робот'];
const DECISIONS: Decision[] = ['auto', 'allowed-once', 'denied', 'timeout'];
const OUTCOMES: Outcome[] = ['ok', 'error', 'refused'];
const MESSAGES = [
  undefined,
  'The user said no',
  'ΟΔΥΣΣΕΥΣ left',
  'path "D:\\Data\\Ann" is outside the roots',
  'İstanbul office',
  'tab\there 😀',
];
const NEEDLES = [
  'file-1',
  'FILE-12',
  'σ',
  'Σ',
  'ς',
  'οδυσσευς',
  'İ',
  'i̇',
  'istanbul',
  '"',
  '\\',
  'c:\\users',
  '\t',
  '😀',
  '\ud83d',
  'home',
  'OFFICE',
  'робот',
  'denied',
  ':100',
  '"n":100',
  '100',
  'e+21',
  'call-1',
  'a',
  'zz',
  'timecall',
  'get_',
  'said no',
];

/** Entries and records with every field the filters look at spread over their values. */
function variedEntry(i: number): AuditEntry {
  const message = MESSAGES[i % MESSAGES.length];
  return entry({
    ts: new Date(Date.UTC(2026, 10, 1) + i * 3_600_000).toISOString(),
    callId: `call-${i}`,
    service: SERVICES[i % 4] as string,
    connection: CONNECTIONS[i % 3] as string,
    decision: DECISIONS[i % 4] as Decision,
    outcome: OUTCOMES[(i >> 2) % 3] as Outcome,
    ...(message !== undefined && { message, error: 'service_error' }),
    params: i % 5 === 0 ? { n: 100, big: 1e21 } : { path: `dir/file-${i}.txt` },
  });
}

/**
 * The same JSON written another way, as a tool rewriting the file might: spaces after colons and
 * commas, letters as \u escapes, a number in exponent form. It parses to the same record, so its
 * hash still holds, but its raw text is not what this log writes.
 */
function foreignLine(record: AuditRecord): string {
  return JSON.stringify(record)
    .replace(/":/g, '": ')
    .replace(/,"/g, ', "')
    .replace(/call-/g, '\\u0063all-')
    .replace(/"n": 100/, '"n": 1e2');
}

describe('AuditLog query over the compact index', () => {
  it('answers exactly as the in-memory index did, live and after a reopen', async () => {
    const dir = await tempDir();
    // October, written by hand: some lines in foreign formatting, a blank line and damage.
    const october = chain(
      Array.from({ length: 1500 }, (_, i) => {
        const e = variedEntry(i);
        const params = e.params;
        return {
          ts: new Date(Date.UTC(2026, 9, 1) + i * 60_000).toISOString(),
          connection: e.connection,
          callId: e.callId,
          service: e.service,
          decision: e.decision,
          outcome: e.outcome,
          ...(e.message !== undefined && { message: e.message, error: e.error }),
          params,
          paramsSha256: sha256Hex(canonicalJson(params)),
        };
      }),
    );
    const octLines = october.map((r, i) => (i % 7 === 3 ? foreignLine(r) : JSON.stringify(r)));
    octLines.splice(800, 0, '', 'not a record');
    await writeFile(join(dir, '2026-10.jsonl'), `${octLines.join('\n')}\n`);
    for (const r of october) expect(JSON.parse(foreignLine(r))).toEqual(r);

    const clock = manualClock('2026-11-10T00:00:00Z');
    const log = await openLog({ dir, clock });
    for (let k = 0; k < 1200; k += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) => log.append(variedEntry(1500 + k + i))),
      );
    }
    expect(await log.verify()).toMatchObject({ ok: true, records: 2700, tornLines: 1 });

    // What the old index would have loaded: every record of every file, in order.
    const records: AuditRecord[] = [];
    for (const name of await listMonthFiles(dir))
      records.push(...((await readMonthFile(dir, name)).records as AuditRecord[]));
    expect(records).toHaveLength(2700);

    const fixed: AuditQuery[] = [
      {},
      { order: 'asc' },
      { limit: MAX_LIMIT, offset: 900 },
      { limit: 5000, order: 'asc', offset: 1200 },
      { service: 'create_file', connection: 'office' },
      { decision: 'denied', outcome: 'refused', order: 'asc' },
      { service: 'nothing' },
      { from: '2026-10-01T10:00:00Z', to: '2026-11-03T00:00:00Z', limit: 1000 },
      { text: 'FILE-12', order: 'asc' },
      { text: ':100', limit: 1000 },
      { text: 'call-14', limit: 1000 },
      ...NEEDLES.map((text) => ({ text, limit: 1000 })),
    ];
    const query = fc.record(
      {
        service: fc.constantFrom(...SERVICES, 'nothing'),
        connection: fc.constantFrom(...CONNECTIONS),
        decision: fc.constantFrom(...DECISIONS),
        outcome: fc.constantFrom(...OUTCOMES),
        from: fc
          .integer({ min: 0, max: 90 })
          .map((d) => new Date(Date.UTC(2026, 9, 1) + d * 86_400_000).toISOString()),
        to: fc
          .integer({ min: 0, max: 90 })
          .map((d) => new Date(Date.UTC(2026, 9, 1) + d * 86_400_000).toISOString()),
        text: fc.constantFrom(...NEEDLES),
        order: fc.constantFrom('asc' as const, 'desc' as const),
        offset: fc.integer({ min: -2, max: 2800 }),
        limit: fc.integer({ min: -1, max: 1200 }),
      },
      { requiredKeys: [] },
    );

    const same = async (l: AuditLog): Promise<void> => {
      for (const q of fixed) {
        const want = reference(records, q);
        expect(await l.query(q), JSON.stringify(q)).toEqual(want.page);
        expect(l.select(q), JSON.stringify(q)).toEqual(want.all);
      }
      await fc.assert(
        fc.asyncProperty(query, async (q) => {
          const want = reference(records, q);
          expect(await l.query(q)).toEqual(want.page);
          expect(await l.selectAsync(q)).toEqual(want.all);
        }),
        { numRuns: 60 },
      );
    };
    await same(log);
    await log.close();
    await same(await openLog({ dir, clock }));
  }, 120_000);

  it('leaves out records whose month file was deleted behind its back', async () => {
    const dir = await tempDir();
    const clock = manualClock('2026-11-30T23:00:00Z');
    const log = await openLog({ dir, clock });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => log.append(entry({ callId: `nov${i}` }))),
    );
    clock.set('2026-12-01T01:00:00Z');
    await Promise.all(
      Array.from({ length: RECENT_RECORDS }, (_, i) => log.append(entry({ callId: `dec${i}` }))),
    );
    await rm(join(dir, '2026-11.jsonl'));
    const page = await log.query({ order: 'asc', limit: 30 });
    expect(page.total).toBe(RECENT_RECORDS + 20); // the index still counts them until a reopen
    expect(page.records.map((r) => r.callId)).toEqual(
      Array.from({ length: 10 }, (_, i) => `dec${i}`),
    );
    expect(Object.isFrozen(page.records[0])).toBe(true); // read from disk, frozen all the same
  });
});
