/**
 * AUTH payload and token helpers (protocols/advent.md §4).
 */

/** The parameters a user may set; only the ones set are sent, in this order. */
export interface AuthParams {
  voiceid?: string;
  lang?: string;
  format?: 'pcm' | 'opus';
  input_audio_format?: 'pcm' | 'opus';
  mode?: 'manual' | 'vad' | 'auto';
  emoji_mode?: string;
}

const ORDER: (keyof AuthParams)[] = [
  'voiceid',
  'lang',
  'format',
  'input_audio_format',
  'mode',
  'emoji_mode',
];

/** `<JWT>##key:value…`. Values are sent as they are (voice ids have spaces and parentheses). */
export function buildAuthPayload(token: string, params: AuthParams): string {
  const problem = checkAuthInputs(token, params);
  if (problem) throw new Error(problem);
  let out = token.trim();
  for (const key of ORDER) {
    const value = params[key];
    if (value !== undefined && value !== '') out += `##${key}:${value}`;
  }
  return out;
}

/** A reason the inputs cannot be sent, or undefined when they can. */
export function checkAuthInputs(token: string, params: AuthParams): string | undefined {
  if (!token.trim()) return 'no token is set for this server';
  if (token.includes('##')) return "the token cannot contain '##'";
  if (/[\r\n]/.test(token)) return 'the token cannot contain line breaks';
  for (const key of ORDER) {
    const value = params[key];
    if (value !== undefined && value.includes('##'))
      return `the setting '${key}' cannot contain '##'`;
  }
  return undefined;
}

/**
 * The `exp` claim of a JWT in epoch ms, decoded without verifying (we only need to know when it
 * dies, to warn and to stop reconnecting with a dead token). Undefined when absent or unreadable.
 */
export function tokenExpiry(token: string): number | undefined {
  const part = token.trim().split('.')[1];
  if (!part) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    if (claims && typeof claims === 'object' && 'exp' in claims) {
      const exp = (claims as { exp: unknown }).exp;
      if (typeof exp === 'number' && Number.isFinite(exp)) return exp * 1000;
    }
  } catch {
    // Not a JWT we can read: the server will judge it.
  }
  return undefined;
}

/**
 * The server's auth reply is unknown (protocol §4): anything that looks like an error is an auth
 * failure; `##INFO:` lines are information.
 */
export function looksLikeAuthFailure(status: string): boolean {
  if (
    /^##INFO:/i.test(status) &&
    !/(fail|invalid|denied|expired|unauthori[sz]ed|401|403)/i.test(status)
  )
    return false;
  return /^##ERROR|fail|invalid|denied|expired|unauthori[sz]ed|\b401\b|\b403\b|forbidden/i.test(
    status,
  );
}
