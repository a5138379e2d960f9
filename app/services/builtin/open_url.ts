import { openUrlCommand } from '../platform/commands.js';
import type { Desktop } from '../platform/desktop.js';
import { asFailure } from '../platform/fallback.js';
import { ServiceFailure, type Service } from '../service.js';

export type OpenUrlParams = { url: string };

export const MAX_URL_LENGTH = 2048;
/** A bare host the model wrote without a scheme ("example.com/path"): https is assumed. */
const BARE_HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}(?::\d{1,5})?(?:[/?#]|$)/i;

function refuse(why: string): ServiceFailure {
  return new ServiceFailure(
    'invalid_params',
    `${why}; only http:// and https:// web addresses can be opened`,
  );
}

/** C0/C1 controls, space, zero-width and bidirectional marks. */
function hidden(c: string): boolean {
  const n = c.codePointAt(0)!;
  return (
    n <= 0x20 ||
    (n >= 0x7f && n <= 0x9f) ||
    (n >= 0x200b && n <= 0x200f) ||
    (n >= 0x202a && n <= 0x202e) ||
    (n >= 0x2066 && n <= 0x2069)
  );
}

/**
 * The address to open, normalised (what the prompt shows is exactly what opens), or a refusal:
 * http and https only — never file:, javascript:, data: or an app's own scheme — and no user name
 * or password in it (https://bank.com@evil.example reads as one site and opens another).
 */
export function checkUrl(raw: string): URL {
  const text = raw.trim();
  // Spaces, control and direction characters are how an address hides a second meaning.
  if ([...text].some(hidden)) throw refuse('the address contains spaces or control characters');
  const withScheme = BARE_HOST.test(text) ? `https://${text}` : text;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw refuse(`'${text.slice(0, 100)}' is not a web address`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refuse(`'${url.protocol}' addresses are not opened`);
  if (!url.hostname) throw refuse('the address has no host');
  if (url.username || url.password)
    throw refuse('the address contains a user name or password before the host');
  if (url.href.length > MAX_URL_LENGTH) throw refuse('the address is too long');
  return url;
}

export function openUrlService(desktop: Desktop): Service<OpenUrlParams> {
  return {
    name: 'open_url',
    title: 'Open a web page',
    summary: 'Opens a web address (http or https only) in your browser.',
    group: 'apps',
    description:
      "Open a web page in the user's default browser. url must be an http:// or https:// address " +
      "(e.g. 'https://example.com'); other kinds of address are refused.",
    parameters: {
      type: 'object',
      properties: {
        url: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_URL_LENGTH,
          description: "The web address, e.g. 'https://example.com/page'",
        },
      },
      required: ['url'],
      additionalProperties: false,
    },
    risk: 'system',
    timeoutMs: 10_000,
    preview(params) {
      const url = checkUrl(params.url);
      return { summary: `Open ${url.href} in your web browser`, resolvedPaths: [] };
    },
    async run(params) {
      const url = checkUrl(params.url);
      const { cmd, args } = openUrlCommand(desktop.platform, url.href);
      try {
        await desktop.runner.launch(cmd, args);
      } catch (err) {
        throw asFailure(err, `opening ${url.href}`);
      }
      return { message: `Opened ${url.href} in the browser` };
    },
  };
}
