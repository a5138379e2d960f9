import { describe, expect, it } from 'vitest';
import { CallLedger } from '../../../app/wire/advent/calls.js';

describe('the calls one Advent connection has carried', () => {
  it('never runs an id twice: running, then answered again with its result', () => {
    const ledger = new CallLedger();
    expect(ledger.seen('c1')).toEqual({ kind: 'new' });
    ledger.begin('c1');
    expect(ledger.seen('c1')).toEqual({ kind: 'running' });
    ledger.finish('c1', '{"ok":1}');
    expect(ledger.seen('c1')).toEqual({ kind: 'answered', result: '{"ok":1}' });
  });

  it('forgets the oldest results first past its budget, and still never runs those ids again', () => {
    // Room for about three results of 100 characters (each costs 2 bytes a character + 48).
    const ledger = new CallLedger(1 << 20, 3 * 248 + 10);
    const result = (i: number): string => String(i).padStart(100, '0');
    for (let i = 0; i < 10_000; i++) {
      ledger.begin(`c${i}`);
      ledger.finish(`c${i}`, result(i));
    }
    for (let i = 9_997; i < 10_000; i++)
      expect(ledger.seen(`c${i}`)).toEqual({ kind: 'answered', result: result(i) });
    for (const i of [0, 5_000, 9_996])
      expect(ledger.seen(`c${i}`)).toEqual({ kind: 'answered', result: undefined });
    // Ids stay (bounded on their own), results stay within their budget.
    expect(ledger.bytes).toBeLessThan(10_000 * (2 * 6 + 48) + 3 * 248 + 10);
  });

  it('says it is full once the ids alone fill their budget', () => {
    const ledger = new CallLedger(10 * (2 * 2 + 48), 1024);
    for (let i = 0; i < 10; i++) {
      ledger.begin(`c${i}`);
      ledger.finish(`c${i}`, undefined);
    }
    expect(ledger.seen('cX')).toEqual({ kind: 'full' });
    expect(ledger.seen('c3')).toEqual({ kind: 'answered', result: undefined });
  });
});
