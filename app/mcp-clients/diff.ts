/**
 * A line diff for showing a person what a config change does: the lines around each change, and
 * runs of unchanged lines folded into a count. Common head and tail are matched first, so only
 * the changed middle needs the quadratic LCS; past a bound the middle shows as removed + added.
 */
import type { DiffLine } from '../contract/mcp-clients.js';

/** The LCS table is at most this many cells; a bigger middle is shown as replaced whole. */
const MAX_CELLS = 4_000_000;
/** Lines shown at most (a new file is small; this bounds a pathological one). */
const MAX_LINES = 2000;
const LINE_CHARS = 2000;

export function lines(text: string): string[] {
  if (text === '') return [];
  const all = text.split(/\r?\n/);
  // A final newline ends the last line; it does not start an empty one.
  if (all.at(-1) === '') all.pop();
  return all;
}

type Op = { op: 'same' | 'add' | 'del'; text: string };

function middleOps(a: string[], b: string[]): Op[] {
  if (a.length * b.length > MAX_CELLS)
    return [
      ...a.map((text): Op => ({ op: 'del', text })),
      ...b.map((text): Op => ({ op: 'add', text })),
    ];
  const w = b.length + 1;
  // lcs[i * w + j]: the longest common subsequence of a[i..] and b[j..].
  const lcs = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i * w + j] =
        a[i] === b[j]
          ? lcs[(i + 1) * w + j + 1]! + 1
          : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
  const out: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: 'same', text: a[i]! });
      i += 1;
      j += 1;
    } else if (lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!) {
      out.push({ op: 'del', text: a[i]! });
      i += 1;
    } else {
      out.push({ op: 'add', text: b[j]! });
      j += 1;
    }
  }
  for (; i < a.length; i++) out.push({ op: 'del', text: a[i]! });
  for (; j < b.length; j++) out.push({ op: 'add', text: b[j]! });
  return out;
}

/** The change from `before` to `after`, with `context` unchanged lines kept around each change. */
export function lineDiff(before: string, after: string, context = 3): DiffLine[] {
  const a = lines(before);
  const b = lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail += 1;
  const ops: Op[] = [
    ...a.slice(0, head).map((text): Op => ({ op: 'same', text })),
    ...middleOps(a.slice(head, a.length - tail), b.slice(head, b.length - tail)),
    ...a.slice(a.length - tail).map((text): Op => ({ op: 'same', text })),
  ];

  const out: DiffLine[] = [];
  let shown = 0;
  const push = (line: DiffLine): void => {
    if (shown < MAX_LINES) {
      out.push(line.op === 'skip' ? line : { op: line.op, text: line.text.slice(0, LINE_CHARS) });
      shown += 1;
    } else if (shown === MAX_LINES) {
      out.push({ op: 'skip', count: ops.length - MAX_LINES });
      shown += 1;
    }
  };
  let k = 0;
  while (k < ops.length) {
    if (ops[k]!.op !== 'same') {
      push(ops[k]!);
      k += 1;
      continue;
    }
    let end = k;
    while (end < ops.length && ops[end]!.op === 'same') end += 1;
    const keepBefore = k === 0 ? 0 : context;
    const keepAfter = end === ops.length ? 0 : context;
    if (end - k > keepBefore + keepAfter) {
      for (let n = k; n < k + keepBefore; n++) push(ops[n]!);
      push({ op: 'skip', count: end - k - keepBefore - keepAfter });
      for (let n = end - keepAfter; n < end; n++) push(ops[n]!);
    } else {
      for (let n = k; n < end; n++) push(ops[n]!);
    }
    k = end;
  }
  return out;
}
