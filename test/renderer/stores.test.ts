import { describe, expect, it } from 'vitest';
import type {
  AuditRecord,
  ChatItem,
  ConnectionView,
  PendingPrompt,
} from '../../app/contract/index.js';
import {
  AuditRows,
  matchesQuery,
  queryOf,
  NO_FILTERS,
  anyFilterSet,
} from '../../renderer/store/audit.js';
import { CHAT_LIMIT, moodsOf, upsertItem, useChat } from '../../renderer/store/chat.js';
import { upsertConnection, isLive } from '../../renderer/store/connection.js';
import { addPrompt } from '../../renderer/store/prompts.js';

const assistant = (id: string, text: string, extra: Partial<ChatItem> = {}): ChatItem =>
  ({
    kind: 'assistant',
    id,
    at: 1,
    connection: 'c1',
    taskId: id,
    text,
    state: 'streaming',
    ...extra,
  }) as ChatItem;

describe('chat store', () => {
  it('replaces an item with the same id in place and appends new ones', () => {
    let items: ChatItem[] = [];
    items = upsertItem(items, { kind: 'user', id: 'u1', at: 0, connection: 'c1', text: 'hi' });
    items = upsertItem(items, assistant('a1', 'Hel'));
    items = upsertItem(items, assistant('a1', 'Hello'));
    items = upsertItem(items, assistant('a1', 'Hello!', { state: 'done' } as Partial<ChatItem>));
    expect(items.map((i) => i.id)).toEqual(['u1', 'a1']);
    expect(items[1]).toMatchObject({ text: 'Hello!', state: 'done' });
  });

  it('keeps at most the limit, dropping the oldest', () => {
    let items: ChatItem[] = [];
    for (let i = 0; i < 5; i++) items = upsertItem(items, assistant(`a${i}`, ''), 3);
    expect(items.map((i) => i.id)).toEqual(['a2', 'a3', 'a4']);
    expect(CHAT_LIMIT).toBeGreaterThanOrEqual(500);
  });

  it('takes the latest mood per connection from the timeline and from updates', () => {
    const items = [
      assistant('a1', '', { mood: 'sad' } as Partial<ChatItem>),
      assistant('a2', '', { mood: 'happy' } as Partial<ChatItem>),
    ];
    expect(moodsOf(items)).toEqual({ c1: { emoji: 'happy', at: 1 } });
    useChat.getState().replace([...items, items[0] as ChatItem]);
    expect(useChat.getState().items).toHaveLength(2);
    useChat.getState().upsert(assistant('a3', 'x', { mood: 'thinking' } as Partial<ChatItem>));
    expect(useChat.getState().moods.c1?.emoji).toBe('thinking');
    useChat.getState().setMood('c2', 'laughing');
    expect(useChat.getState().moods.c2?.emoji).toBe('laughing');
  });
});

describe('connection and prompt stores', () => {
  const view = (id: string, status: 'idle' | 'ready'): ConnectionView => ({
    profile: { id, kind: 'advent', name: id, host: 'h', port: 1, hasToken: true, address: 'h:1' },
    state: status === 'ready' ? { status, since: 0 } : { status },
    active: false,
    capabilities: { chat: true, voice: true, speak: true },
  });

  it('upserts connection views by profile id', () => {
    let list = upsertConnection([], view('a', 'idle'));
    list = upsertConnection(list, view('b', 'idle'));
    list = upsertConnection(list, view('a', 'ready'));
    expect(list.map((c) => [c.profile.id, c.state.status])).toEqual([
      ['a', 'ready'],
      ['b', 'idle'],
    ]);
    expect(isLive(view('a', 'ready').state)).toBe(true);
    expect(isLive(view('a', 'idle').state)).toBe(false);
  });

  it('queues prompts in arrival order without duplicates', () => {
    const p = (id: string): PendingPrompt => ({
      id,
      connection: { id: 'demo', name: 'Demo' },
      service: 'create_file',
      grantKey: 'create_file',
      params: {},
      summary: id,
      resolvedPaths: [],
      expiresAt: 0,
    });
    let q = addPrompt([], p('1'));
    q = addPrompt(q, p('2'));
    q = addPrompt(q, p('1'));
    expect(q.map((x) => x.id)).toEqual(['1', '2']);
  });
});

const rec = (seq: number, extra: Partial<AuditRecord> = {}): AuditRecord => ({
  seq,
  ts: new Date(Date.UTC(2026, 0, 1, 0, seq)).toISOString(),
  connection: 'Demo',
  dialect: 'advent',
  callId: `c${seq}`,
  service: seq % 2 ? 'create_file' : 'get_current_time',
  params: { filename: `notes/${seq}.txt` },
  paramsSha256: 'x',
  decision: 'auto',
  outcome: 'ok',
  durationMs: seq,
  prevHash: '',
  hash: '',
  ...extra,
});

describe('audit rows', () => {
  it('places pages by rank so records prepended later do not shift loaded pages', () => {
    const rows = new AuditRows();
    // Newest first: 10 records in all, page of 3 at offset 0 → seq 10, 9, 8.
    rows.addPage(0, 10, [rec(10), rec(9), rec(8)]);
    expect(rows.total).toBe(10);
    expect(rows.at(0)?.seq).toBe(10);
    expect(rows.at(3)).toBeUndefined();
    expect(rows.missing(0, 3)).toBe(false);
    expect(rows.missing(0, 4)).toBe(true);

    // A live record arrives on top.
    expect(rows.prepend(rec(11))).toBe(true);
    expect(rows.prepend(rec(11))).toBe(false);
    expect(rows.total).toBe(11);
    expect([0, 1, 2, 3].map((i) => rows.at(i)?.seq)).toEqual([11, 10, 9, 8]);

    // The next page is asked for at the new offset, and the server counts 11.
    rows.addPage(4, 11, [rec(7), rec(6)]);
    expect([4, 5].map((i) => rows.at(i)?.seq)).toEqual([7, 6]);
    expect(rows.indexOfSeq(6)).toBe(5);
    expect(rows.loaded).toBe(6);
  });

  it('does not double-count a live record the server already counted', () => {
    const rows = new AuditRows();
    rows.addPage(0, 3, [rec(3), rec(2), rec(1)]);
    expect(rows.prepend(rec(3))).toBe(false);
    expect(rows.total).toBe(3);
  });

  it('filters live records like the core does', () => {
    const r = rec(5, { message: 'Path OUTSIDE', decision: 'denied', outcome: 'refused' });
    expect(matchesQuery(r, {})).toBe(true);
    expect(matchesQuery(r, { service: 'create_file' })).toBe(true);
    expect(matchesQuery(r, { service: 'get_current_time' })).toBe(false);
    expect(matchesQuery(r, { decision: 'denied', outcome: 'refused' })).toBe(true);
    expect(matchesQuery(r, { text: 'outside' })).toBe(true);
    expect(matchesQuery(r, { text: 'notes/5' })).toBe(true);
    expect(matchesQuery(r, { text: 'nope' })).toBe(false);
    expect(matchesQuery(r, { from: '2026-01-01T00:06:00.000Z' })).toBe(false);
    expect(matchesQuery(r, { to: '2026-01-01T00:05:00.000Z' })).toBe(true);
  });

  it('builds queries from the filter form, newest first, leaving out what is empty', () => {
    expect(queryOf(NO_FILTERS)).toEqual({ order: 'desc' });
    const q = queryOf({
      ...NO_FILTERS,
      service: 'create_file',
      text: '  todo ',
      from: '2026-01-01T10:00',
    });
    expect(q).toMatchObject({ order: 'desc', service: 'create_file', text: 'todo' });
    expect(q.from).toBe(new Date('2026-01-01T10:00').toISOString());
    expect(queryOf({ ...NO_FILTERS, from: 'garbage' }).from).toBeUndefined();
  });

  it('filters by an MCP server as the list of services its tools became', () => {
    const q = queryOf({
      ...NO_FILTERS,
      server: 'srv-1',
      serverServices: ['files_read_file', 'files_write_file'],
    });
    expect(q.services).toEqual(['files_read_file', 'files_write_file']);
    expect(anyFilterSet({ ...NO_FILTERS, serverServices: ['x'] })).toBe(false);
    expect(anyFilterSet({ ...NO_FILTERS, server: 'srv-1' })).toBe(true);
    // A server whose tools are not known now matches nothing rather than everything.
    expect(queryOf({ ...NO_FILTERS, server: 'gone' }).services).toEqual([]);
  });
});

describe('prompts store: a prompt its server took back', () => {
  it('leaves the queue on a withdrawn resolution and is kept for the notice; others just leave', async () => {
    const { fakeBridge } = await import('./fake-bridge.js');
    const { attachFeed } = await import('../../renderer/store/feed.js');
    const { usePrompts } = await import('../../renderer/store/prompts.js');
    const f = fakeBridge();
    const detach = attachFeed(f.bridge);
    const prompt = (id: string): PendingPrompt => ({
      id,
      connection: { id: 'c1', name: 'Home' },
      service: 'create_file',
      grantKey: 'create_file',
      params: {},
      summary: 'Create file a.txt',
      resolvedPaths: [],
      expiresAt: 1,
    });
    f.emit('prompt', prompt('p1'));
    f.emit('prompt', prompt('p2'));
    f.emit('promptResolved', { id: 'p1', resolution: 'withdrawn' });
    f.emit('promptResolved', { id: 'p2', resolution: 'timeout' });
    expect(usePrompts.getState().prompts).toEqual([]);
    expect(usePrompts.getState().withdrawn.map((p) => p.id)).toEqual(['p1']);
    usePrompts.getState().clearWithdrawn();
    expect(usePrompts.getState().withdrawn).toEqual([]);
    detach();
  });
});

describe('notices from a connection’s protocol handling', () => {
  it('never toast the dialect’s words: info stays in the conversation, a warning toasts a human line', async () => {
    const { fakeBridge } = await import('./fake-bridge.js');
    const { attachFeed } = await import('../../renderer/store/feed.js');
    const { useToasts } = await import('../../renderer/store/toasts.js');
    useToasts.setState({ toasts: [] });
    const f = fakeBridge();
    const detach = attachFeed(f.bridge);
    const connection = { id: 'xz', name: 'XiaoZhi' };
    f.emit('notice', {
      level: 'info',
      message: 'unexpected MCP response (id 7)',
      connection,
      kind: 'protocol',
    });
    expect(useToasts.getState().toasts).toEqual([]);
    f.emit('notice', {
      level: 'warn',
      message: 'a tools/call without an id was ignored: nobody could receive its result',
      connection,
      kind: 'protocol',
    });
    expect(useToasts.getState().toasts).toMatchObject([
      { level: 'warn', words: { key: 'chat.protocolToast', params: { server: 'XiaoZhi' } } },
    ]);
    f.emit('notice', { level: 'warn', message: 'plain words from the agent' });
    expect(useToasts.getState().toasts.at(-1)).not.toHaveProperty('words');
    detach();
  });
});
