/**
 * Human sizes for prompts and messages ("1.2 KB"). Binary steps (1024) because that is what file
 * managers on the user's machine show for the same file.
 */
const UNITS = ['KB', 'MB', 'GB', 'TB'] as const;

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} B`;
  let value = bytes / 1024;
  let unit = 0;
  // 1023.96 KB would print as "1024.0 KB": step up before rounding can overflow the unit.
  while (value >= 1023.95 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}
