import { ServiceFailure, type Service } from '../service.js';

export type GetCurrentTimeParams = {
  format?: 'simple' | 'detailed';
  timezone?: string;
};

export interface DetailedTime {
  /** Local time with its offset, e.g. "2025-01-22T14:30:25+08:00". */
  iso: string;
  date: string;
  time: string;
  weekday: string;
  timezone: string;
  utcOffset: string;
  unixMs: number;
}

interface WallTime {
  date: string;
  time: string;
  weekday: string;
  timezone: string;
  offsetMinutes: number;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

// Building an Intl.DateTimeFormat costs about 0.1 ms, several times more than the rest of a call,
// so formatters are kept per zone (bounded) and the system zone is looked up at most once a minute
// (a laptop that travels still follows its zone).
const SYSTEM_ZONE_TTL_MS = 60_000;
const MAX_FORMATTERS = 64;
let systemZone: { zone: string; at: number } | undefined;
const formatters = new Map<string, Intl.DateTimeFormat>();

function systemTimeZone(): string {
  const now = Date.now();
  if (!systemZone || now - systemZone.at > SYSTEM_ZONE_TTL_MS) {
    systemZone = { zone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC', at: now };
  }
  return systemZone.zone;
}

/** Throws the model-facing refusal for a zone Intl does not know. */
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  const cached = formatters.get(timeZone);
  if (cached) return cached;
  const formatter = createFormatter(timeZone);
  if (formatters.size >= MAX_FORMATTERS) formatters.delete(formatters.keys().next().value!);
  formatters.set(timeZone, formatter);
  return formatter;
}

function createFormatter(timeZone: string): Intl.DateTimeFormat {
  try {
    return new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23', // 'hour12: false' prints midnight as 24 in some ICU versions
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
    });
  } catch {
    throw new ServiceFailure(
      'invalid_params',
      `unknown time zone '${timeZone.slice(0, 64)}'; use an IANA name such as 'Asia/Shanghai' or 'Europe/Paris'`,
    );
  }
}

/** A zone's UTC offset through one whole UTC minute, learnt from Intl once for that minute. */
interface ZoneMinute {
  minute: number;
  offsetMinutes: number;
  timezone: string;
}

const zoneMinutes = new Map<string, ZoneMinute>();
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/**
 * `formatToParts` is most of this service's cost (~15 µs a call), and a zone's offset can change
 * only at a transition, which falls on a whole UTC minute whenever the offset before it is a whole
 * number of minutes (every zone's since 1972). So Intl is asked once per zone per minute, and the
 * wall clock within that minute is the instant shifted by the offset. An offset that is not whole
 * minutes (some zones' local mean time before standard time) is never cached.
 */
function wallTime(ms: number, timeZone: string): WallTime {
  const minute = Math.floor(ms / 60_000);
  let zone = zoneMinutes.get(timeZone);
  if (zone?.minute !== minute) {
    const formatter = formatterFor(timeZone);
    const exact = offsetAt(formatter, minute * 60_000);
    if (!Number.isInteger(exact)) return wallTimeByIntl(formatter, ms);
    zone = { minute, offsetMinutes: exact, timezone: formatter.resolvedOptions().timeZone };
    if (!zoneMinutes.has(timeZone) && zoneMinutes.size >= MAX_FORMATTERS)
      zoneMinutes.delete(zoneMinutes.keys().next().value!);
    zoneMinutes.set(timeZone, zone);
  }
  const wall = new Date(Math.floor(ms / 1000) * 1000 + zone.offsetMinutes * 60_000);
  return {
    date: `${pad(wall.getUTCFullYear(), 4)}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}`,
    time: `${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}`,
    weekday: WEEKDAYS[wall.getUTCDay()] as string,
    timezone: zone.timezone,
    offsetMinutes: zone.offsetMinutes,
  };
}

/** The wall clock at `ms` as Intl reads it, fields by name. */
function partsAt(formatter: Intl.DateTimeFormat, ms: number): Record<string, string> {
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(ms)) parts[part.type] = part.value;
  return parts;
}

/**
 * The offset in minutes (not rounded) that makes the wall clock and the instant agree, DST
 * included; Intl has no direct "offset" field that every supported Node version formats alike.
 */
function offsetAt(formatter: Intl.DateTimeFormat, ms: number): number {
  const parts = partsAt(formatter, ms);
  const n = (type: string): number => Number(parts[type]);
  const wallAsUtc = Date.UTC(
    n('year'),
    n('month') - 1,
    n('day'),
    n('hour'),
    n('minute'),
    n('second'),
  );
  return (wallAsUtc - Math.floor(ms / 1000) * 1000) / 60_000;
}

function wallTimeByIntl(formatter: Intl.DateTimeFormat, ms: number): WallTime {
  const parts = partsAt(formatter, ms);
  const n = (type: string): number => Number(parts[type]);
  return {
    date: `${pad(n('year'), 4)}-${pad(n('month'))}-${pad(n('day'))}`,
    time: `${pad(n('hour'))}:${pad(n('minute'))}:${pad(n('second'))}`,
    weekday: parts.weekday ?? '',
    timezone: formatter.resolvedOptions().timeZone,
    offsetMinutes: Math.round(offsetAt(formatter, ms)),
  };
}

function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

export function currentTime(ms: number, format: 'simple', timeZone?: string): string;
export function currentTime(ms: number, format: 'detailed', timeZone?: string): DetailedTime;
export function currentTime(
  ms: number,
  format: 'simple' | 'detailed',
  timeZone?: string,
): string | DetailedTime;
export function currentTime(
  ms: number,
  format: 'simple' | 'detailed',
  timeZone: string = systemTimeZone(),
): string | DetailedTime {
  const wall = wallTime(ms, timeZone);
  if (format === 'simple') return `${wall.date} ${wall.time}`;
  const utcOffset = formatOffset(wall.offsetMinutes);
  return {
    iso: `${wall.date}T${wall.time}${utcOffset}`,
    date: wall.date,
    time: wall.time,
    weekday: wall.weekday,
    timezone: wall.timezone,
    utcOffset,
    unixMs: ms,
  };
}

export const getCurrentTimeService: Service<GetCurrentTimeParams> = {
  name: 'get_current_time',
  title: 'Current time',
  summary: 'Tells the current date and time, in any time zone.',
  group: 'time',
  description:
    "Get the current date and time on the user's computer, in the user's time zone or a given one.",
  parameters: {
    type: 'object',
    properties: {
      format: {
        type: 'string',
        enum: ['simple', 'detailed'],
        description:
          "simple = 'YYYY-MM-DD HH:mm:ss'; detailed = ISO time, date, weekday, time zone and UTC offset",
      },
      timezone: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        description: "IANA time zone such as 'Asia/Shanghai'; default: the user's own",
      },
    },
    additionalProperties: false,
  },
  risk: 'read',
  timeoutMs: 2000,
  preview(params) {
    const zone = params.timezone ?? systemTimeZone();
    formatterFor(zone); // refuse an unknown zone before anything is asked or logged as run
    return { summary: `Read the current time (${zone})`, resolvedPaths: [] };
  },
  async run(params, ctx) {
    return currentTime(ctx.clock.now(), params.format ?? 'simple', params.timezone);
  },
};
