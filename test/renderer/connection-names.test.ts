import i18next from 'i18next';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord, ConnectionView } from '../../app/contract/index.js';
import { clientConnection } from '../../app/mcp-serve/identity.js';
import {
  type SeenConnections,
  connectionChoiceKey,
  connectionChoices,
  connectionLabel,
} from '../../renderer/lib/names.js';
import { NO_FILTERS, queryOf } from '../../renderer/store/audit.js';
import { entry, useLogs, useTempDirs } from '../audit/helpers.js';
import { useLanguage } from './i18n-helper.js';

const tempDir = useTempDirs();
const openLog = useLogs();

beforeAll(() => useLanguage('en'));

const view = (id: string, name: string, kind = 'advent') =>
  ({ profile: { id, kind, name } }) as unknown as ConnectionView;
const none: SeenConnections = { ids: new Map(), names: new Set() };
const kindName = (kind: string) => ({ advent: 'Advent', xiaozhi: 'XiaoZhi' })[kind] ?? kind;

describe('an MCP app’s name', () => {
  it('reads as an app’s even when it took a saved server’s name, in English and Chinese', async () => {
    const home = view('p-1', 'Home');
    // What app/mcp-serve/session.ts puts on the calls (and so on prompts and records) of an app
    // whose clientInfo says title "Home".
    const app = clientConnection({ name: 'evil-tool', title: 'Home' });
    const t = i18next.t;
    expect(connectionLabel(t, { id: 'p-1', name: 'Home' }, [home])).toBe('Home');
    expect(connectionLabel(t, app, [home])).toBe('Home (MCP app)');
    // An Activity row: the record's connection and id.
    expect(connectionLabel(t, { id: app.id, name: app.name }, [home])).toBe('Home (MCP app)');
    await useLanguage('zh-CN');
    expect(connectionLabel(i18next.t, app, [home])).toBe('Home（MCP 应用）');
    await useLanguage('en');
  });
});

describe('the Activity connection filter', () => {
  it('offers one choice per connection id, labelled as rows are, telling same names apart', () => {
    const t = i18next.t;
    const seen: SeenConnections = {
      ids: new Map([
        ['p-a', 'Home'], // renamed "Office" since
        ['mcp:evil-tool', 'Home'],
        ['local', 'local'],
      ]),
      names: new Set(['Home', 'Retired']),
    };
    const choices = connectionChoices(
      t,
      [view('p-a', 'Office'), view('p-b', 'Home'), view('p-c', 'Home')],
      seen,
      kindName,
    );
    expect(choices).toEqual([
      { key: 'id:p-a', connectionId: 'p-a', connection: 'Office', label: 'Office' },
      {
        key: 'id:p-b',
        connectionId: 'p-b',
        connection: 'Home',
        label: 'Home (Advent · p-b)',
      },
      {
        key: 'id:p-c',
        connectionId: 'p-c',
        connection: 'Home',
        label: 'Home (Advent · p-c)',
      },
      // An app's own name never reaches older records: it may be anybody's.
      { key: 'id:mcp:evil-tool', connectionId: 'mcp:evil-tool', label: 'Home (MCP app)' },
      { key: 'id:local', connectionId: 'local', connection: 'local', label: 'You, in this app' },
      // "Home" of the older records is with the profiles named Home; "Retired" nobody's now.
      { key: 'name:Retired', connection: 'Retired', label: 'Retired' },
    ]);
    expect(new Set(choices.map((c) => c.label)).size).toBe(choices.length);
  });

  it('tells same names of different kinds apart by kind, and an older name by saying so', () => {
    const t = i18next.t;
    const labels = connectionChoices(
      t,
      [view('p-a', 'Home'), view('x-1', 'Home', 'xiaozhi')],
      none,
      kindName,
    ).map((c) => c.label);
    expect(labels).toEqual(['Home (Advent)', 'Home (XiaoZhi)']);
    // A deleted profile "Gone" (by id) and older records named "Gone".
    const gone = connectionChoices(
      t,
      [],
      { ids: new Map([['p-9', 'Gone']]), names: new Set(['Gone']) },
      kindName,
    );
    expect(gone.map((c) => c.label)).toEqual(['Gone (p-9)', 'Gone (older records)']);
  });

  it('keeps the chosen connection choosable, and selects it by key', () => {
    const t = i18next.t;
    const picked = { ...NO_FILTERS, connectionId: 'p-gone', connection: 'Gone' };
    const choices = connectionChoices(t, [], none, kindName, picked);
    expect(choices.map((c) => c.key)).toEqual(['id:p-gone']);
    expect(connectionChoiceKey(picked)).toBe('id:p-gone');
    const byName = { ...NO_FILTERS, connection: 'Old' };
    expect(connectionChoices(t, [], none, kindName, byName).map((c) => c.key)).toEqual([
      'name:Old',
    ]);
    expect(connectionChoiceKey(byName)).toBe('name:Old');
    expect(connectionChoiceKey(NO_FILTERS)).toBe('');
  });

  it('each choice lists exactly the rows the table labels with its name', async () => {
    const t = i18next.t;
    const log = await openLog({ dir: await tempDir() });
    const call = (callId: string, connection: string, connectionId?: string) =>
      log.append(entry({ callId, connection, ...(connectionId ? { connectionId } : {}) }));
    // Two profiles named "Home"; then the first is renamed "Office"; an app calls itself "Home".
    await call('a1', 'Home', 'p-a');
    await call('b1', 'Home', 'p-b');
    await call('app', 'Home', 'mcp:evil-tool');
    await call('a2', 'Office', 'p-a');
    const connections = [view('p-a', 'Office'), view('p-b', 'Home')];
    const all = await log.selectAsync({ order: 'asc' });
    const seen: SeenConnections = {
      ids: new Map(all.map((r) => [r.connectionId ?? '', r.connection])),
      names: new Set(),
    };
    const rowLabel = (r: AuditRecord) =>
      connectionLabel(t, { id: r.connectionId, name: r.connection }, connections);
    const listed: string[] = [];
    for (const choice of connectionChoices(t, connections, seen, kindName)) {
      const q = queryOf({
        ...NO_FILTERS,
        connectionId: choice.connectionId ?? '',
        connection: choice.connection ?? '',
      });
      const rows = (await log.query(q)).records;
      expect(rows.length, choice.label).toBeGreaterThan(0);
      for (const r of rows) expect(rowLabel(r), choice.label).toBe(choice.label);
      listed.push(...rows.map((r) => r.callId));
    }
    expect(listed.sort()).toEqual(['a1', 'a2', 'app', 'b1']);
  });
});
