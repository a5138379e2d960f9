import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  currentTime,
  getCurrentTimeService as service,
} from '../../../app/services/builtin/get_current_time.js';
import { createFilesSandbox } from '../../../app/services/files/sandbox.js';
import { Registry } from '../../../app/services/registry.js';
import { ServiceFailure } from '../../../app/services/service.js';
import { context, fixedClock } from '../helpers.js';

const files = createFilesSandbox({ roots: () => [], maxFileBytes: () => 0 });
// 2025-01-22 06:30:25.123 UTC, a Wednesday (winter: New York is on EST).
const WINTER = Date.UTC(2025, 0, 22, 6, 30, 25, 123);
// 2025-07-01 12:00:00 UTC (summer: New York is on EDT).
const SUMMER = Date.UTC(2025, 6, 1, 12, 0, 0);

const run = (params: Parameters<typeof service.run>[0], at = WINTER) =>
  service.run(params, context(files, fixedClock(at)));

describe('get_current_time', () => {
  it('gives the simple wall time in Asia/Shanghai', async () => {
    expect(await run({ format: 'simple', timezone: 'Asia/Shanghai' })).toBe('2025-01-22 14:30:25');
  });

  it('gives the simple wall time in America/New_York', async () => {
    expect(await run({ timezone: 'America/New_York' })).toBe('2025-01-22 01:30:25');
  });

  it('gives the detailed time in Asia/Shanghai', async () => {
    expect(await run({ format: 'detailed', timezone: 'Asia/Shanghai' })).toEqual({
      iso: '2025-01-22T14:30:25+08:00',
      date: '2025-01-22',
      time: '14:30:25',
      weekday: 'Wednesday',
      timezone: 'Asia/Shanghai',
      utcOffset: '+08:00',
      unixMs: WINTER,
    });
  });

  it('gives the detailed time in America/New_York, daylight saving included', async () => {
    expect(await run({ format: 'detailed', timezone: 'America/New_York' })).toMatchObject({
      iso: '2025-01-22T01:30:25-05:00',
      weekday: 'Wednesday',
      utcOffset: '-05:00',
    });
    expect(await run({ format: 'detailed', timezone: 'America/New_York' }, SUMMER)).toMatchObject({
      iso: '2025-07-01T08:00:00-04:00',
      weekday: 'Tuesday',
      utcOffset: '-04:00',
    });
  });

  it('handles half-hour offsets and midnight as 00', async () => {
    const midnightKolkata = Date.UTC(2025, 0, 21, 18, 30, 0);
    expect(
      await run({ format: 'detailed', timezone: 'Asia/Kolkata' }, midnightKolkata),
    ).toMatchObject({
      time: '00:00:00',
      date: '2025-01-22',
      utcOffset: '+05:30',
    });
  });

  it("defaults to the system's own zone", async () => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(await run({ format: 'detailed' })).toMatchObject({ timezone: zone, unixMs: WINTER });
  });

  it('refuses an unknown zone with a message naming valid examples', async () => {
    const expected = new ServiceFailure(
      'invalid_params',
      "unknown time zone 'Mars/Base'; use an IANA name such as 'Asia/Shanghai' or 'Europe/Paris'",
    );
    await expect(run({ timezone: 'Mars/Base' })).rejects.toEqual(expected);
    expect(() => service.preview?.({ timezone: 'Mars/Base' }, context(files))).toThrow(
      expected.message,
    );
  });

  it('declares a schema the registry accepts and enforces', () => {
    const registry = new Registry();
    registry.add(service);
    expect(registry.validate('get_current_time', { format: 'long' })).toEqual({
      ok: false,
      message: "parameter 'format' must be one of: simple, detailed",
    });
    expect(registry.validate('get_current_time', {})).toEqual({ ok: true });
    expect(service.risk).toBe('read');
    expect(service.timeoutMs).toBe(2000);
  });
});

/** The wall clock in `timeZone` at `ms` as Intl reads it, without the service's per-minute cache. */
function intlWall(ms: number, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
    })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${parts.weekday}`;
}

const ZONES = [
  'UTC',
  'Asia/Shanghai',
  'America/New_York',
  'Europe/London',
  'Australia/Lord_Howe', // a 30-minute daylight saving shift
  'Asia/Kathmandu', // +05:45
  'Pacific/Chatham', // +12:45 / +13:45
  'America/St_Johns', // -03:30 with daylight saving
  'Africa/Casablanca', // daylight saving suspended for Ramadan each year
];

describe('get_current_time across daylight saving transitions', () => {
  const show = (ms: number, zone: string): string => {
    const d = currentTime(ms, 'detailed', zone);
    return `${d.date} ${d.time} ${d.weekday}`;
  };

  it('reads every instant as Intl does, from second to second across a transition', () => {
    // New York springs forward at 2025-03-09 07:00:00 UTC and falls back at 2025-11-02 06:00:00 UTC;
    // Lord Howe moves by half an hour at 2025-04-05 15:00:00 UTC.
    const edges = [
      ['America/New_York', Date.UTC(2025, 2, 9, 7, 0, 0)],
      ['America/New_York', Date.UTC(2025, 10, 2, 6, 0, 0)],
      ['Australia/Lord_Howe', Date.UTC(2025, 3, 5, 15, 0, 0)],
    ] as const;
    for (const [zone, edge] of edges) {
      for (let s = -90; s <= 90; s++) {
        const ms = edge + s * 1000 + 250;
        expect(show(ms, zone)).toBe(intlWall(ms, zone));
      }
    }
    expect(currentTime(Date.UTC(2025, 2, 9, 6, 59, 59), 'simple', 'America/New_York')).toBe(
      '2025-03-09 01:59:59',
    );
    expect(currentTime(Date.UTC(2025, 2, 9, 7, 0, 0), 'simple', 'America/New_York')).toBe(
      '2025-03-09 03:00:00',
    );
  });

  it('reads any instant from 1972 to 2100 in any of several zones as Intl does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1972, 0, 1), max: Date.UTC(2100, 0, 1) }),
        fc.constantFrom(...ZONES),
        fc.integer({ min: 0, max: 59_999 }),
        (ms, zone, later) => {
          expect(show(ms, zone)).toBe(intlWall(ms, zone));
          // A second reading in the same minute comes from the cache.
          const next = Math.floor(ms / 60_000) * 60_000 + later;
          expect(show(next, zone)).toBe(intlWall(next, zone));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
