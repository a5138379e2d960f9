import { describe, expect, it } from 'vitest';
import {
  describeDue,
  describeDuration,
  localIso,
  parseWhen,
} from '../../../app/services/reminders/when.js';

// Local wall times built with the Date constructor: the test holds in any time zone.
const now = new Date(2025, 0, 22, 14, 0, 0).getTime();
const at = (...p: [number, number, number, number, number, number?]) =>
  new Date(...(p as [number, number, number, number, number, number])).getTime();

describe('when a reminder is due', () => {
  it('reads an ISO date-time as local time, or with its own offset', () => {
    expect(parseWhen('2025-01-22T14:30', now)).toEqual({
      ok: true,
      at: at(2025, 0, 22, 14, 30, 0),
    });
    expect(parseWhen('2025-01-23 08:05:09', now)).toEqual({
      ok: true,
      at: at(2025, 0, 23, 8, 5, 9),
    });
    expect(parseWhen('2025-01-22T14:30:00+08:00', now)).toEqual({
      ok: true,
      at: Date.UTC(2025, 0, 22, 6, 30),
    });
    expect(parseWhen('2025-01-22T06:30Z', now)).toEqual({
      ok: true,
      at: Date.UTC(2025, 0, 22, 6, 30),
    });
  });

  it('reads a time of day as the next time the clock shows it', () => {
    expect(parseWhen('14:30', now)).toEqual({ ok: true, at: at(2025, 0, 22, 14, 30, 0) });
    expect(parseWhen('9:15', now)).toEqual({ ok: true, at: at(2025, 0, 23, 9, 15, 0) });
  });

  it('refuses what is not a time, with an example the model can follow', () => {
    expect(parseWhen('2025-02-30T10:00', now)).toMatchObject({ ok: false });
    expect(parseWhen('25:00', now)).toMatchObject({ ok: false });
    expect(parseWhen('tomorrow', now)).toEqual({
      ok: false,
      message:
        "'tomorrow' is not a time this agent understands; use an ISO date-time such as '2025-01-22T14:30' (local time) or a time such as '14:30'",
    });
    expect(parseWhen('2025-01-23', now)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/has no time of day/),
    });
  });

  it('says times and durations the way people do', () => {
    expect(describeDue(at(2025, 0, 22, 14, 35, 0), now)).toBe('14:35');
    expect(describeDue(at(2025, 0, 23, 9, 0, 0), now)).toBe('tomorrow 09:00');
    expect(describeDue(at(2025, 2, 1, 9, 0, 30), now)).toBe('2025-03-01 09:00:30');
    expect(describeDuration(300)).toBe('5 minutes');
    expect(describeDuration(90)).toBe('1 minute 30 seconds');
    expect(describeDuration(93_784)).toBe('1 day 2 hours');
    expect(localIso(at(2025, 0, 22, 14, 30, 0))).toMatch(/^2025-01-22T14:30:00[+-]\d{2}:\d{2}$/);
  });
});
