/**
 * JSON with comments and trailing commas, as VS Code writes its `mcp.json` and settings: comments
 * and trailing commas are blanked (outside strings), then it is plain JSON.parse. Blanked, not
 * removed: every other character keeps its place, so a parse error's position is the user's own
 * line and column. One linear pass, no recursion, so its cost is bounded by the input's length.
 */
export function parseJsonc(text: string): unknown {
  return JSON.parse(stripJsonc(text.replace(/^\uFEFF/, '')));
}

export function stripJsonc(text: string): string {
  const out: string[] = [];
  let i = 0;
  // The index in `out` of a comma that only whitespace or comments follow so far.
  let pendingComma = -1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out.push(text.slice(i, j + 1));
      pendingComma = -1;
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      out.push(' '.repeat(stop - i));
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      // Newlines stay, so the lines after the comment keep their numbers.
      out.push(text.slice(i, stop).replace(/[^\n]/g, ' '));
      i = stop;
    } else if (c === ',') {
      pendingComma = out.length;
      out.push(c);
      i += 1;
    } else {
      if ((c === '}' || c === ']') && pendingComma >= 0) out[pendingComma] = ' ';
      if (!/\s/.test(c)) pendingComma = -1;
      out.push(c);
      i += 1;
    }
  }
  return out.join('');
}

/**
 * Why `text` did not parse, for people: V8's reason with the place as a line and column of `text`,
 * and without the excerpt of the text some of V8's messages quote ("Unexpected token 'x',
 * ..."…"... is not valid JSON"). The text may be a config file or a pasted snippet holding tokens and keys, and
 * the reason is shown on screen and may reach a log.
 */
export function jsonErrorText(err: unknown, text: string): string {
  const message = err instanceof Error ? err.message : String(err);
  const reason = message
    .replace(/, (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/, '')
    .replace(/ in JSON at position (\d+)(?: \(line \d+ column \d+\))?/, (_, at: string) => {
      const { line, column } = lineAndColumn(text, Number(at));
      return ` at line ${line}, column ${column}`;
    });
  // A message in another shape (a future V8) is not shown at all rather than risk quoting the text.
  return reason.includes('"') ? 'the text does not parse' : reason;
}

function lineAndColumn(text: string, at: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) {
    line += 1;
    start = i + 1;
  }
  return { line, column: at - start + 1 };
}
