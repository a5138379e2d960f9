import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../../app/contract/audit.js';
import type { ConnectionView } from '../../../app/contract/commands.js';
import type { PendingPrompt } from '../../../app/contract/policy.js';
import { Printer, formatAuditLine } from '../../../main/headless/printer.js';
import { oneLine, replyText, safeJson } from '../../../main/headless/terminal-text.js';
import { Capture } from '../../helpers/capture.js';

/** Bytes a terminal acts on: C0 but newline, DEL, C1, and the bidi controls. */
const CONTROL =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** Each with what it would do to a terminal printed raw (test names never carry the bytes). */
const CASES: [string, string][] = [
  ['clear the screen, cursor home', '\u001b[2J\u001b[H'],
  ['retitle the window (OSC … BEL)', '\u001b]0;pwned\u0007'],
  ['up one line and erase it: rewrite the permission question', '\u001b[1A\u001b[2K'],
  ['carriage return: overwrite the line', 'ok\rforged'],
  ['backspaces', 'back\b\b\b\bspace'],
  ['C1 CSI', '\u009b31m'],
  ['DEL', '\u007f'],
  ['right-to-left override', 'a\u202eevil\u202c'],
  ['isolates and marks', '\u2066isolate\u2069\u200f\u061c'],
  ['line separator', 'line\u2028sep'],
];
const HOSTILE = CASES.map(([, s]) => s);

describe('text from a server on a terminal', () => {
  it.each(CASES)('oneLine escapes a hostile string (%s) so nothing in it is obeyed', (_, s) => {
    const out = oneLine(s);
    expect(out).not.toMatch(CONTROL);
    expect(out).not.toContain('\n');
    expect(out).not.toMatch(/[\u2028\u2029]/);
  });

  it('shows what was escaped instead of dropping it silently', () => {
    expect(oneLine('\u001b[2J')).toBe('\\x1B[2J');
    expect(oneLine('a\u202eb')).toBe('a\\u202Eb');
    expect(oneLine('two\nlines')).toBe('two\\x0Alines');
    expect(oneLine('\u009b')).toBe('\\x9B');
  });

  it('leaves ordinary text alone: accents, CJK, emoji with joiners', () => {
    for (const s of ['héllo wörld', '你好，世界', '👨‍👩‍👧 😀', 'tab-free line: a|b <c> "d"'])
      expect(oneLine(s)).toBe(s);
  });

  it('reply text keeps newlines and tabs readable, drops carriage returns, escapes the rest', () => {
    expect(replyText('one\r\ntwo\n\tthree')).toBe('one\ntwo\n\tthree');
    expect(replyText('ok\rforged')).toBe('okforged');
    for (const s of HOSTILE) expect(replyText(s)).not.toMatch(CONTROL);
  });

  it('a sequence split across streamed pieces is as harmless as a whole one', () => {
    const pieces = ['before \u001b', '[2', 'J after \u202e', 'x'];
    expect(pieces.map(replyText).join('')).not.toMatch(CONTROL);
  });

  it('safeJson is the same value, with DEL, C1 and bidi escaped too', () => {
    const value = { name: 'a\u202eb\u007f\u0085', nested: ['\u001b[2J', '\u2066'], n: 1 };
    const json = safeJson(value);
    expect(json).not.toMatch(CONTROL);
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe('the printer escapes what servers and profiles choose', () => {
  const hostile = HOSTILE.join(' ');

  it('streams a hostile reply, then the prompt, a call, a notice and an audit line, with no control byte', () => {
    const stdout = new Capture();
    const stderr = new Capture();
    const out = new Printer(stdout, stderr);
    const view = {
      profile: { id: 'p1', kind: 'advent', name: `srv${hostile}`, hasToken: true, address: '' },
      state: { status: 'ready', since: 1 },
      registration: { state: 'registered', at: 1, services: [`svc${hostile}`] },
      active: true,
      capabilities: { chat: true, voice: true, speak: true },
    } as unknown as ConnectionView;
    out.connection({ ...view, state: { status: 'connecting', attempt: 1 } });
    out.connection(view, view.profile.name);
    const reply = {
      kind: 'assistant',
      id: 'a:p1:t1',
      at: 0,
      connection: 'p1',
      taskId: 't1',
      state: 'streaming',
      text: `Hello\n${HOSTILE[0]}`,
      thought: hostile,
    } as const;
    out.reply(reply);
    out.reply({ ...reply, text: `${reply.text}${hostile}`, state: 'done' });
    out.mood(`\u001b[31m😀`);
    const prompt: PendingPrompt = {
      id: 'q1',
      connection: { id: 'p1', name: `srv${hostile}` },
      service: 'create_file',
      params: { filename: hostile },
      summary: `Create file ${hostile}`,
      resolvedPaths: [`/home/u/${hostile}`],
      expiresAt: Date.now() + 60_000,
    } as PendingPrompt;
    out.prompt(prompt, Date.now());
    out.call({
      kind: 'tool',
      id: 't:1',
      at: 0,
      connection: 'p1',
      service: 'create_file',
      callId: '1',
      params: {},
      state: 'done',
      summary: `Create file ${hostile}`,
      decision: 'denied',
      outcome: 'refused',
      message: hostile,
      durationMs: 1,
    });
    out.notice('warn', hostile);
    out.info(`server: ${hostile}`);
    out.connection({
      ...view,
      state: { status: 'offline', reason: 'auth_failed', message: hostile },
    });
    const record = {
      seq: 1,
      ts: '2026-01-01T00:00:00.000Z',
      connectionId: 'p1',
      connection: `srv${hostile}`,
      dialect: 'advent',
      callId: '1',
      service: 'create_file',
      params: { filename: hostile },
      decision: 'denied',
      outcome: 'refused',
      error: 'denied',
      message: hostile,
      durationMs: 1,
    } as unknown as AuditRecord;
    out.audit([record], 1);

    expect(stdout.text).not.toMatch(CONTROL);
    expect(stderr.text).not.toMatch(CONTROL);
    expect(formatAuditLine(record)).not.toMatch(CONTROL);
    // Readable: the reply's own newline is kept, the prompt's question stays on its own line.
    expect(stdout.text).toContain('assistant› Hello\n\\x1B[2J');
    expect(stdout.text).toMatch(/\n {2}allow\? \[y\] once/);
    expect(stdout.text).toContain('(mood: \\x1B[31m😀)');
  });
});
