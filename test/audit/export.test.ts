import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CSV_COLUMNS, csvCell, exportAudit, toCsv, toJson } from '../../app/audit/export.js';
import type { AuditLog } from '../../app/audit/log.js';
import type { AuditRecord } from '../../app/contract/audit.js';
import { entry, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();

/** A strict RFC 4180 reader, to check what a spreadsheet will see. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 2;
        continue;
      }
      if (ch === '"') quoted = false;
      else cell += ch;
      i += 1;
      continue;
    }
    if (ch === '"' && cell === '') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i += 1;
    } else if (ch === '"' || ch === '\r' || ch === '\n')
      throw new Error(`bare ${JSON.stringify(ch)} at ${i}`);
    else cell += ch;
    i += 1;
  }
  if (cell !== '' || row.length > 0) throw new Error('last row not ended by CRLF');
  return rows;
}

async function sampleLog(): Promise<AuditLog> {
  const log = await openLog({
    dir: await tempDir(),
    clock: manualClock('2026-11-15T10:00:00Z'),
  });
  await log.append(
    entry({ callId: 'plain', params: { path: 'a.txt' }, connectionId: 'p-home', runMs: 2 }),
  );
  await log.append(
    entry({
      callId: '=HYPERLINK("http://evil","click")',
      service: 'create_file',
      decision: 'denied',
      outcome: 'refused',
      error: 'denied',
      message: 'Line one\r\nline "two", with comma',
      params: { content: '@SUM(A1)' },
    }),
  );
  return log;
}

describe('CSV export', () => {
  it('writes a header and one CRLF row per record in the documented columns, the connection id and run time included', async () => {
    const log = await sampleLog();
    const rows = parseCsv(toCsv(log.select({ order: 'asc' })));
    expect(rows[0]).toEqual([...CSV_COLUMNS]);
    expect(rows).toHaveLength(3);
    const [r1] = log.select({ order: 'asc' }) as [AuditRecord];
    expect(rows[1]).toEqual([
      '1',
      r1.ts,
      'home',
      'p-home',
      'advent',
      'plain',
      'get_current_time',
      'auto',
      'ok',
      '',
      '',
      '3',
      '',
      '2',
      '{"path":"a.txt"}',
      r1.paramsSha256,
      r1.hash,
    ]);
  });

  it('quotes commas, quotes and line breaks per RFC 4180', async () => {
    const log = await sampleLog();
    const csv = toCsv(log.select({ order: 'asc' }));
    expect(csv).toContain('"Line one\r\nline ""two"", with comma"');
    expect(parseCsv(csv)[2]?.[CSV_COLUMNS.indexOf('message')]).toBe(
      'Line one\r\nline "two", with comma',
    );
  });

  it('defuses cells a spreadsheet would run as a formula', async () => {
    const log = await sampleLog();
    const row = parseCsv(toCsv(log.select({ order: 'asc' })))[2] as string[];
    expect(row[CSV_COLUMNS.indexOf('callId')]).toBe(`'=HYPERLINK("http://evil","click")`);
    for (const start of ['=', '+', '-', '@', '\t', '\r']) {
      expect(csvCell(`${start}1+1`).replace(/^"/, '')).toMatch(/^'/);
    }
    expect(csvCell(-5)).toBe('-5'); // our own numbers stay numbers
    expect(csvCell('safe=1')).toBe('safe=1');
  });

  it('round-trips any text cell through a strict reader (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const rows = parseCsv(`${csvCell(text)},x\r\n`);
        const guarded = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
        expect(rows).toEqual([[guarded, 'x']]);
      }),
    );
  });
});

describe('exportAudit', () => {
  it('exports every matching record, ignoring paging, as JSON or CSV', async () => {
    const log = await sampleLog();
    for (let i = 0; i < 150; i++)
      void log.append(entry({ callId: `bulk-${i}`, service: 'list_files' }));

    const json = JSON.parse(
      await exportAudit(log, { service: 'list_files', limit: 10, offset: 5 }, 'json'),
    ) as AuditRecord[];
    expect(json).toHaveLength(150);
    expect(json[0]?.callId).toBe('bulk-149');

    const csv = parseCsv(await exportAudit(log, { decision: 'denied', order: 'asc' }, 'csv'));
    expect(csv).toHaveLength(2);
    expect(csv[1]?.[CSV_COLUMNS.indexOf('service')]).toBe('create_file');
  });

  it('writes JSON as a pretty array that parses back to the records', async () => {
    const log = await sampleLog();
    const records = log.select({});
    const text = toJson(records);
    expect(text).toContain('\n  {\n    "seq": 2,');
    expect(JSON.parse(text)).toEqual(records);
  });

  it('refuses an unknown format by name', async () => {
    const log = await sampleLog();
    await expect(exportAudit(log, {}, 'xml' as never)).rejects.toThrow(/unknown format "xml"/);
  });
});
