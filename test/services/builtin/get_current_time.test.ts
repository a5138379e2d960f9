import { describe, expect, it } from 'vitest';
import { getCurrentTimeService as service } from '../../../app/services/builtin/get_current_time.js';
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
