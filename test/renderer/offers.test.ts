/**
 * The Services page's count of what each connection is offered, and the selection its dialog
 * saves: the same rule the core applies, and choices that keep meaning what the user chose.
 */
import { describe, expect, it } from 'vitest';
import type { ServiceView } from '../../app/contract/index.js';
import { offerAllows } from '../../app/contract/index.js';
import { offerFrom, offerSummary } from '../../renderer/features/services/offers.js';

const view = (name: string, over: Partial<ServiceView> = {}): ServiceView => ({
  name,
  title: name,
  description: name,
  summary: name,
  group: 'other',
  risk: 'read',
  userOnly: false,
  enabled: true,
  policy: 'allow',
  alwaysGrants: [],
  parameters: { type: 'object' },
  ...over,
});

const services = [
  view('a'),
  view('b'),
  view('c', { enabled: false }),
  view('mine', { userOnly: true }),
  view('d'),
];

describe('what a connection is offered, as the Services page counts it', () => {
  it('counts the enabled services a server can see, and warns over the limit', () => {
    expect(offerSummary(services, undefined, undefined)).toEqual({
      count: 3,
      over: false,
      missing: [],
    });
    expect(offerSummary(services, undefined, 2)).toMatchObject({ count: 3, over: true });
    expect(offerSummary(services, { only: ['a', 'c', 'gone'] }, 1)).toEqual({
      count: 1,
      over: false,
      missing: ['gone'],
    });
    expect(offerSummary(services, { except: ['a'] }, 3)).toMatchObject({ count: 2, over: false });
  });

  it('saves "only" or "except" as chosen, keeps names not here now, and everything as no selection', () => {
    const all = ['a', 'b', 'c', 'd'];
    expect(offerFrom(all, new Set(all), true, [])).toBeNull();
    expect(offerFrom(all, new Set(['a', 'b']), true, [])).toEqual({ except: ['c', 'd'] });
    expect(offerFrom(all, new Set(['a', 'b']), false, ['gone'])).toEqual({
      only: ['a', 'b', 'gone'],
    });
    // A service added later flows in under "except" and stays out under "only".
    expect(offerAllows(offerFrom(all, new Set(['a']), true, []) ?? undefined, 'new_tool')).toBe(
      true,
    );
    expect(offerAllows(offerFrom(all, new Set(['a']), false, []) ?? undefined, 'new_tool')).toBe(
      false,
    );
  });
});
