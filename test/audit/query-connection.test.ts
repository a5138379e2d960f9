import { describe, expect, it } from 'vitest';
import { exportAudit } from '../../app/audit/export.js';
import { MonthReader, runSync } from '../../app/audit/lines.js';
import type { AuditLog } from '../../app/audit/log.js';
import { RecordIndex } from '../../app/audit/query.js';
import { type AuditQuery, type AuditRecord, matchesAuditQuery } from '../../app/contract/audit.js';
import { checkCommand } from '../../app/contract/validate.js';
import { entry, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();

/**
 * Two profiles both named "Home" (p-a, p-b); p-a is then renamed "Office"; an MCP app calls itself
 * "Home"; and two calls come from before ids were recorded, one named "Home".
 */
async function history(log: AuditLog): Promise<void> {
  const call = (callId: string, connection: string, connectionId?: string) =>
    log.append(entry({ callId, connection, ...(connectionId ? { connectionId } : {}) }));
  await call('old-home', 'Home');
  await call('old-other', 'Other');
  await call('a1', 'Home', 'p-a');
  await call('b1', 'Home', 'p-b');
  await call('app', 'Home', 'mcp:evil-tool');
  await call('a2', 'Office', 'p-a');
}

const callIds = (records: readonly AuditRecord[]) => records.map((r) => r.callId);

describe('Audit query by connection id', () => {
  it('keeps two profiles of one name apart, and a renamed profile’s calls together', async () => {
    const log = await openLog({ dir: await tempDir() });
    await history(log);
    const asc = (q: AuditQuery) => log.query({ ...q, order: 'asc' });
    expect(callIds((await asc({ connectionId: 'p-a' })).records)).toEqual(['a1', 'a2']);
    expect(callIds((await asc({ connectionId: 'p-b' })).records)).toEqual(['b1']);
    expect(callIds((await asc({ connectionId: 'mcp:evil-tool' })).records)).toEqual(['app']);
    expect((await asc({ connectionId: 'p-gone' })).total).toBe(0);
  });

  it('reaches records written before ids by the name given with the id, and only those', async () => {
    const log = await openLog({ dir: await tempDir() });
    await history(log);
    const asc = (q: AuditQuery) => log.query({ ...q, order: 'asc' });
    // p-b, still named "Home": its own call and the id-less "Home" one, not p-a's or the app's.
    expect(callIds((await asc({ connectionId: 'p-b', connection: 'Home' })).records)).toEqual([
      'old-home',
      'b1',
    ]);
    expect(callIds((await asc({ connectionId: 'p-a', connection: 'Office' })).records)).toEqual([
      'a1',
      'a2',
    ]);
    // An id no record has still reaches the older records by name.
    expect(callIds((await asc({ connectionId: 'p-new', connection: 'Other' })).records)).toEqual([
      'old-other',
    ]);
  });

  it('still filters by the recorded name alone for callers that send only a name', async () => {
    const log = await openLog({ dir: await tempDir() });
    await history(log);
    expect(callIds((await log.query({ connection: 'Home', order: 'asc' })).records)).toEqual([
      'old-home',
      'a1',
      'b1',
      'app',
    ]);
  });

  it('answers as the live filter does, after a reopen and with the text filter', async () => {
    const dir = await tempDir();
    await history(await openLog({ dir }));
    const log = await openLog({ dir });
    const all = await log.selectAsync({ order: 'asc' });
    expect(all).toHaveLength(6);
    const queries: AuditQuery[] = [];
    for (const connectionId of [undefined, 'p-a', 'p-b', 'mcp:evil-tool', 'nobody'])
      for (const connection of [undefined, 'Home', 'Office', 'Other', 'nobody'])
        for (const text of [undefined, 'a'])
          queries.push({
            ...(connectionId ? { connectionId } : {}),
            ...(connection ? { connection } : {}),
            ...(text ? { text } : {}),
          });
    for (const q of queries) {
      const got = await log.selectAsync({ ...q, order: 'asc' });
      expect(callIds(got), JSON.stringify(q)).toEqual(
        callIds(all.filter((r) => matchesAuditQuery(r, q))),
      );
    }
  });

  it('exports one connection’s calls, not another’s of the same name', async () => {
    const log = await openLog({ dir: await tempDir() });
    await history(log);
    const json = await exportAudit(log, { connectionId: 'p-b', order: 'asc' }, 'json');
    expect(callIds(JSON.parse(json) as AuditRecord[])).toEqual(['b1']);
  });

  it('finds a connection by an id the index had no room for, and treats a non-id as none', () => {
    const index = new RecordIndex(4096);
    const id = (i: number) => `p-${i}`.padEnd(60, 'x');
    const at = (i: number, over: Partial<AuditRecord>) =>
      ({
        ...entry({ callId: `c${i}`, connection: 'Home' }),
        seq: i + 1,
        paramsSha256: '0'.repeat(64),
        prevHash: '0'.repeat(64),
        hash: '1'.repeat(64),
        ...over,
      }) as AuditRecord;
    const file = index.fileId('/nonexistent'); // every record stays in memory: none is read
    for (let i = 0; i < 200; i++) index.push(at(i, { connectionId: id(i) }), file, 0, 10, true);
    // Edited by hand: an id that is not a string, and an empty one, are no id at all.
    index.push(at(200, { connectionId: 42 as unknown as string }), file, 0, 10, true);
    index.push(at(201, { connectionId: '' }), file, 0, 10, true);
    const page = (q: AuditQuery) =>
      callIds(runSync(index.page({ ...q, order: 'asc' }), new MonthReader(index.paths)).records);
    expect(page({ connectionId: id(3) })).toEqual(['c3']);
    expect(page({ connectionId: id(190) })).toEqual(['c190']);
    expect(page({ connectionId: id(999) })).toEqual([]);
    expect(page({ connectionId: id(999), connection: 'Home' })).toEqual(['c200', 'c201']);
    expect(page({ connectionId: id(190), connection: 'Home', text: 'c19' })).toEqual(['c190']);
  });

  it('accepts a connection id at the host boundary, and refuses an empty or non-text one', () => {
    expect(checkCommand('queryAudit', [{ connectionId: 'p-a', connection: 'Home' }])).toMatchObject(
      { ok: true },
    );
    expect(checkCommand('exportAudit', [{ connectionId: 'mcp:evil-tool' }, 'csv'])).toMatchObject({
      ok: true,
    });
    expect(checkCommand('queryAudit', [{ connectionId: '' }])).toMatchObject({ ok: false });
    expect(checkCommand('queryAudit', [{ connectionId: 7 }])).toMatchObject({ ok: false });
  });
});
