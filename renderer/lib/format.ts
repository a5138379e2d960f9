/** Small formatting helpers shared by pages. Pure: no DOM. */

export function formatTime(at: number | string, lang: string, withSeconds = false): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return String(at);
  return new Intl.DateTimeFormat(lang, {
    hour: '2-digit',
    minute: '2-digit',
    ...(withSeconds ? { second: '2-digit' } : {}),
  }).format(d);
}

export function formatDateTime(at: number | string, lang: string): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return String(at);
  return new Intl.DateTimeFormat(lang, {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).format(d);
}

/** "1.2 KB", binary steps like file managers. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1023.95 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Whole seconds left until `at` (never negative). */
export function secondsUntil(at: number, now: number): number {
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Pretty JSON that never throws (cycles, BigInt) — for showing params. */
export function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * A one-line summary of call params: `filename: "notes/todo.txt", content: "buy milk…"`.
 * Long values are cut so a card stays one line.
 */
export function summarizeParams(params: unknown, max = 120): string {
  if (params === undefined || params === null) return '';
  if (typeof params !== 'object') return cut(JSON.stringify(params) ?? '', max);
  const parts: string[] = [];
  for (const [key, value] of Object.entries(params as Record<string, unknown>)) {
    let shown: string;
    if (typeof value === 'string') shown = JSON.stringify(cut(value.replace(/\s+/g, ' '), 40));
    else shown = cut(JSON.stringify(value) ?? String(value), 40);
    parts.push(`${key}: ${shown}`);
  }
  return cut(parts.join(', '), max);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
