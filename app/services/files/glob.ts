/**
 * Name globs: `*` any run of characters, `?` one character, everything else literal, compared
 * case-insensitively (as file managers on macOS and Windows do). Matched by the two-pointer
 * algorithm, O(name × pattern) at worst: a regular expression built from a hostile pattern such
 * as `*a*a*a*a*b` could backtrack exponentially.
 */
export type NameMatcher = (name: string) => boolean;

export function nameGlob(pattern: string): NameMatcher {
  const p = Array.from(pattern.toLowerCase());
  return (name) => matches(p, Array.from(name.toLowerCase()));
}

function matches(p: readonly string[], s: readonly string[]): boolean {
  let pi = 0;
  let si = 0;
  let star = -1;
  let resume = 0;
  while (si < s.length) {
    if (pi < p.length && (p[pi] === '?' || (p[pi] !== '*' && p[pi] === s[si]))) {
      pi++;
      si++;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi++;
      resume = si;
    } else if (star >= 0) {
      pi = star + 1;
      si = ++resume;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}
