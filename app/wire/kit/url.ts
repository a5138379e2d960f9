/**
 * An endpoint address carries its token in the query (`…/mcp/?token=…`). Settings keep the
 * address without it and the SecretStore keeps the token; the two are joined again only to dial.
 */

/** The address without its `token` query parameter, and that token (if it had one). */
export function splitUrlToken(raw: string): { url: string; token?: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { url: raw };
  }
  const token = u.searchParams.get('token');
  if (token === null) return { url: raw };
  u.searchParams.delete('token');
  return { url: u.toString(), token };
}

/** The address to dial: `url` with `token` set as its query parameter. */
export function joinUrlToken(url: string, token: string): string {
  const u = new URL(url);
  u.searchParams.set('token', token);
  return u.toString();
}
