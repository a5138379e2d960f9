/**
 * JSON with comments and trailing commas, as VS Code writes its `mcp.json` and settings: comments
 * are blanked and trailing commas dropped (outside strings), then it is plain JSON.parse. One
 * linear pass, no recursion, so its cost is bounded by the input's length.
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
      while (i < text.length && text[i] !== '\n') i += 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
      out.push(' ');
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
