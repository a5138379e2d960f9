/**
 * When a reminder is due, from what a model writes: an ISO date-time (with an offset, or local
 * time without one) or a time of day (the next time the clock shows it). Local time is this
 * computer's. And the words the previews and results use for times and durations.
 */

export type When = { ok: true; at: number } | { ok: false; message: string };

const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?$/;
const ISO_ZONED =
  /^\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
const TIME_OF_DAY = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;

const EXAMPLES =
  "use an ISO date-time such as '2025-01-22T14:30' (local time) or a time such as '14:30'";

export function parseWhen(input: string, now: number): When {
  const text = input.trim();
  if (ISO_ZONED.test(text)) {
    const at = Date.parse(text.replace(' ', 'T'));
    return Number.isFinite(at) ? { ok: true, at } : bad(text);
  }
  const local = ISO_LOCAL.exec(text);
  if (local) {
    const [y, mo, d, h, mi, s] = local.slice(1).map((v) => Number(v ?? 0)) as number[];
    if (!validParts(mo!, d!, h!, mi!, s!)) return bad(text);
    const date = new Date(y!, mo! - 1, d!, h!, mi!, s!);
    // 2025-02-30 would roll over into March: refuse a date that does not exist.
    if (date.getMonth() !== mo! - 1 || date.getDate() !== d!) return bad(text);
    return { ok: true, at: date.getTime() };
  }
  const tod = TIME_OF_DAY.exec(text);
  if (tod) {
    const [h, mi, s] = tod.slice(1).map((v) => Number(v ?? 0)) as number[];
    if (!validParts(1, 1, h!, mi!, s!)) return bad(text);
    const today = new Date(now);
    const at = new Date(today.getFullYear(), today.getMonth(), today.getDate(), h!, mi!, s!);
    // Already past today: the next time the clock shows it is tomorrow.
    if (at.getTime() <= now) at.setDate(at.getDate() + 1);
    return { ok: true, at: at.getTime() };
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(text))
    return { ok: false, message: `'${text}' has no time of day; ${EXAMPLES}` };
  return bad(text);
}

function validParts(mo: number, d: number, h: number, mi: number, s: number): boolean {
  return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && s <= 59;
}

function bad(text: string): When {
  return {
    ok: false,
    message: `'${text.slice(0, 40)}' is not a time this agent understands; ${EXAMPLES}`,
  };
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** "14:30" today, "tomorrow 09:00", else "2025-01-22 14:30" — in this computer's local time. */
export function describeDue(at: number, now: number): string {
  const d = new Date(at);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}${d.getSeconds() ? `:${pad(d.getSeconds())}` : ''}`;
  const today = new Date(now);
  const tomorrow = new Date(today.getFullYear(), today.getMonth(), today.getDate() + 1);
  if (sameDay(d, today)) return time;
  if (sameDay(d, tomorrow)) return `tomorrow ${time}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

function sameDay(a: Date, b: Date): boolean {
  return (
    a.getFullYear() === b.getFullYear() &&
    a.getMonth() === b.getMonth() &&
    a.getDate() === b.getDate()
  );
}

/** "90 seconds" → "1 minute 30 seconds"; "2 hours", "1 day 3 hours". */
export function describeDuration(seconds: number): string {
  const parts: string[] = [];
  const units: [number, string][] = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  let left = Math.round(seconds);
  for (const [size, name] of units) {
    const n = Math.floor(left / size);
    if (n > 0) parts.push(`${n} ${name}${n === 1 ? '' : 's'}`);
    left -= n * size;
  }
  return parts.length ? parts.slice(0, 2).join(' ') : '0 seconds';
}

/** The local ISO time with its offset, for results a model may repeat: 2025-01-22T14:30:00+08:00. */
export function localIso(at: number): string {
  const d = new Date(at);
  const offset = -d.getTimezoneOffset();
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}
