/**
 * Our own origin. The renderer is served from the privileged custom scheme `app://advent/`
 * (protocol.ts), never from file://, so "is this our page?" is one exact origin comparison that
 * every guard (navigation, IPC sender, permissions) shares.
 */
export const APP_SCHEME = 'app';
export const APP_HOST = 'advent';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY = `${APP_ORIGIN}/index.html`;

/**
 * The origin of a URL, or undefined when it has none we could trust. Computed by hand because
 * WHATWG `URL.origin` is the string "null" for non-special schemes such as `app:`, which would
 * make every custom-scheme URL look alike.
 */
export function originOf(url: unknown): string | undefined {
  if (typeof url !== 'string' || url.length === 0) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  // Credentials in the authority are a classic origin-confusion trick; nothing of ours uses them.
  if (!parsed.host || parsed.username || parsed.password) return undefined;
  return `${parsed.protocol}//${parsed.host}`;
}

/** True only for URLs of our own origin (`app://advent`), exactly: no other host, port or scheme. */
export function isOwnOrigin(url: unknown): boolean {
  return originOf(url) === APP_ORIGIN;
}
