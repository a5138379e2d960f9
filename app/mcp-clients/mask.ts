/**
 * Lines of another app's config file, as a setup preview shows them (Settings, `mcp-setup`). The
 * diff of a setup change carries unchanged lines around it, and those belong to the user's other
 * MCP servers: their `env` tokens, `Authorization` headers, `--api-key=…` arguments. A shared
 * screen, a screenshot, a terminal's scrollback or a script's log keep what is shown; so values
 * whose name says credential are shown as `***`. The preview is only shown: what is written is
 * the file as planned, so wrongly hiding one only hides it on screen.
 */
import { isSecretHeaderName } from '../services/mcp/config.js';

export const MASK = '***';

const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
/** `"NAME": "value"`: an env variable, a header, any member. */
const MEMBER = new RegExp(String.raw`("((?:[^"\\]|\\.)*)"\s*:\s*)${STRING}`, 'g');
/** `"--token", "value"`: a flag and its value as two arguments. */
const FLAG_PAIR = new RegExp(String.raw`("-{1,2}([A-Za-z0-9_.-]+)"\s*,\s*)${STRING}`, 'g');
/** `--api-key=value`, `?token=value`, `API_KEY=value` inside a string. */
const ASSIGNMENT = /([A-Za-z0-9_.-]+=)([^\s"&\\]+)/g;
/** `Authorization: Bearer value` given as an argument. */
const BEARER = /(\b(?:Bearer|Basic)\s+)([^\s"\\]+)/gi;

export function maskSecrets(line: string): { text: string; masked: boolean } {
  let masked = false;
  const hide = (keep: string): string => {
    masked = true;
    return keep;
  };
  const text = line
    .replace(MEMBER, (all, head: string, name: string) =>
      isSecretHeaderName(name) ? hide(`${head}"${MASK}"`) : all,
    )
    .replace(FLAG_PAIR, (all, head: string, name: string) =>
      isSecretHeaderName(name) ? hide(`${head}"${MASK}"`) : all,
    )
    .replace(ASSIGNMENT, (all, head: string) =>
      isSecretHeaderName(head.slice(0, -1)) ? hide(`${head}${MASK}`) : all,
    )
    .replace(BEARER, (all, head: string, value: string) =>
      value === MASK ? all : hide(`${head}${MASK}`),
    );
  return { text, masked };
}
