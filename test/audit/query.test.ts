import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { GENESIS_HASH, recordHash } from '../../app/audit/chain.js';
import type { AuditLog } from '../../app/audit/log.js';
import { MAX_LIMIT } from '../../app/audit/query.js';
import { canonicalJson, sha256Hex } from '../../app/audit/redact.js';
import { type AuditRecord, matchesAuditQuery } from '../../app/contract/audit.js';
import { entry, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();

describe('AuditLog query', () => {
  let log: AuditLog;

  beforeEach(async () => {
    log = await openLog({ dir: await tempDir(), clock: manualClock('2026-11-15T10:00:00Z') });
    await log.append(
      entry({
        ts: '2026-11-01T08:00:00Z',
        callId: 'k1',
        service: 'create_file',
        decision: 'allowed-once',
        params: { path: 'Notes/Todo.txt' },
      }),
    );
    await log.append(
      entry({
        ts: '2026-11-02T08:00:00Z',
        callId: 'k2',
        service: 'create_file',
        decision: 'denied',
        outcome: 'refused',
        error: 'denied',
        message: 'The user said no',
        connection: 'office',
      }),
    );
    await log.append(
      entry({ ts: '2026-11-03T08:00:00Z', callId: 'k3', service: 'get_current_time' }),
    );
    await log.append(
      entry({
        ts: '2026-11-04T08:00:00Z',
        callId: 'k4',
        service: 'create_file',
        decision: 'timeout',
        outcome: 'refused',
        error: 'prompt_timeout',
      }),
    );
    await log.append(
      entry({
        ts: '2026-11-05T08:00:00Z',
        callId: 'k5',
        service: 'delete_file',
        outcome: 'error',
        error: 'service_error',
        connection: 'office',
      }),
    );
  });

  const ids = (page: { records: AuditRecord[] }): string[] => page.records.map((r) => r.callId);

  it('returns newest first by default and oldest first on asc', async () => {
    expect(ids(await log.query())).toEqual(['k5', 'k4', 'k3', 'k2', 'k1']);
    expect(ids(await log.query({ order: 'asc' }))).toEqual(['k1', 'k2', 'k3', 'k4', 'k5']);
  });

  it('filters by service, decision, outcome and connection, combined', async () => {
    expect(ids(await log.query({ service: 'create_file' }))).toEqual(['k4', 'k2', 'k1']);
    expect(ids(await log.query({ decision: 'denied' }))).toEqual(['k2']);
    expect(ids(await log.query({ outcome: 'refused' }))).toEqual(['k4', 'k2']);
    expect(ids(await log.query({ connection: 'office' }))).toEqual(['k5', 'k2']);
    expect(ids(await log.query({ service: 'create_file', connection: 'office' }))).toEqual(['k2']);
    expect(await log.query({ service: 'nothing' })).toEqual({ total: 0, records: [] });
  });

  it('filters by a list of services (the tools of one MCP server), with the other filters', async () => {
    const both = { services: ['delete_file', 'get_current_time', 'never_called'] };
    expect(ids(await log.query(both))).toEqual(['k5', 'k3']);
    expect(ids(await log.query({ ...both, connection: 'office' }))).toEqual(['k5']);
    expect(await log.query({ services: ['never_called'] })).toEqual({ total: 0, records: [] });
    expect(await log.query({ services: [] })).toEqual({ total: 0, records: [] });
    // The UI's live filter agrees with the log's.
    const all = (await log.query({ order: 'desc' })).records;
    expect(all.filter((r) => matchesAuditQuery(r, both)).map((r) => r.callId)).toEqual([
      'k5',
      'k3',
    ]);
  });

  it('treats from and to as inclusive ISO bounds', async () => {
    const page = await log.query({
      from: '2026-11-02T08:00:00Z',
      to: '2026-11-04T08:00:00.000Z',
      order: 'asc',
    });
    expect(ids(page)).toEqual(['k2', 'k3', 'k4']);
    expect(ids(await log.query({ from: '2026-11-04T09:00:00+01:00' }))).toEqual(['k5', 'k4']);
    await expect(log.query({ from: 'yesterday' })).rejects.toThrow(
      /'from' must be an ISO 8601 time/,
    );
  });

  it('matches text case-insensitively in service, callId, connection, message, error and params', async () => {
    expect(ids(await log.query({ text: 'todo.TXT' }))).toEqual(['k1']);
    expect(ids(await log.query({ text: 'SAID NO' }))).toEqual(['k2']);
    expect(ids(await log.query({ text: 'prompt_time' }))).toEqual(['k4']);
    expect(ids(await log.query({ text: 'OFFICE' }))).toEqual(['k5', 'k2']);
    expect(ids(await log.query({ text: 'delete_' }))).toEqual(['k5']);
    expect(ids(await log.query({ text: 'K3' }))).toEqual(['k3']);
    // No match across two fields: service "get_current_time" followed by callId "k3".
    expect((await log.query({ text: 'timek3' })).total).toBe(0);
  });

  it('pages with offset and limit while total counts every match', async () => {
    expect(await log.query({ limit: 2 })).toMatchObject({ total: 5 });
    expect(ids(await log.query({ limit: 2 }))).toEqual(['k5', 'k4']);
    expect(ids(await log.query({ limit: 2, offset: 2 }))).toEqual(['k3', 'k2']);
    expect(ids(await log.query({ limit: 2, offset: 4 }))).toEqual(['k1']);
    expect(await log.query({ limit: 2, offset: 9 })).toEqual({ total: 5, records: [] });
    expect(ids(await log.query({ limit: -3, offset: -1 }))).toEqual([]);
    expect((await log.query({ limit: 0 })).total).toBe(5);
  });

  it('hands out records that cannot be changed behind the log', async () => {
    const [r] = (await log.query({ limit: 1 })).records;
    expect(() => {
      (r as { service: string }).service = 'x';
    }).toThrow(TypeError);
    expect(Object.isFrozen(r?.params)).toBe(true);
  });
});

describe('AuditLog query at scale', () => {
  it('answers over 100 000 records loaded once at open', async () => {
    const dir = await tempDir();
    const total = 100_000;
    const services = ['create_file', 'get_current_time', 'list_files', 'delete_file'];
    const chunks: string[] = [];
    let prevHash = GENESIS_HASH;
    for (let i = 1; i <= total; i++) {
      const params = { path: `dir/file-${i}.txt` };
      const unhashed = {
        seq: i,
        ts: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
        connection: i % 2 ? 'home' : 'office',
        dialect: 'advent' as const,
        callId: `call-${i}`,
        service: services[i % 4] as string,
        params,
        paramsSha256: sha256Hex(canonicalJson(params)),
        decision: i % 10 === 0 ? ('denied' as const) : ('auto' as const),
        outcome: i % 10 === 0 ? ('refused' as const) : ('ok' as const),
        durationMs: i % 7,
        prevHash,
      };
      const record = { ...unhashed, hash: recordHash(unhashed) };
      prevHash = record.hash;
      chunks.push(JSON.stringify(record));
    }
    const file = join(dir, '2026-11.jsonl');
    await writeFile(file, `${chunks.join('\n')}\n`);
    await appendFile(file, 'not a record\n'); // damage: skipped and counted, never fatal

    const log = await openLog({ dir, clock: manualClock('2026-11-30T00:00:00Z') });
    expect(log.stats()).toEqual({ records: total, files: 1, tornLines: 1 });
    expect((await log.query()).total).toBe(total);
    expect((await log.query({ service: 'create_file' })).total).toBe(total / 4);
    expect((await log.query({ decision: 'denied', connection: 'office' })).total).toBe(total / 10);
    expect((await log.query({ text: 'FILE-9999' })).total).toBe(11); // 9999 and 99990..99999
    const to = new Date(Date.UTC(2026, 10, 1) + 500 * 1000).toISOString();
    expect((await log.query({ to })).total).toBe(500);
    const page = await log.query({ limit: 5000, offset: 10 });
    expect(page.records).toHaveLength(MAX_LIMIT);
    expect(page.records[0]?.seq).toBe(total - 10);

    const next = await log.append(entry());
    expect(next).toMatchObject({ seq: total + 1, prevHash });
    expect((await log.query()).total).toBe(total + 1);
  }, 120_000);
});
