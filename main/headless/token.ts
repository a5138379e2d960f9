/** The login token given on the command line: `--token` or `--token-file`, trimmed, never empty. */
import { readFile } from 'node:fs/promises';

export interface TokenFlags {
  token?: string;
  tokenFile?: string;
}

/**
 * Resolves the token, or rejects with a message for the user that names the flag or the file
 * (never the token itself).
 */
export async function readTokenFlag(flags: TokenFlags): Promise<string> {
  if (flags.token !== undefined) {
    if (!flags.token.trim()) throw new Error('--token is empty');
    return flags.token.trim();
  }
  if (flags.tokenFile === undefined) throw new Error('--token or --token-file is required');
  try {
    const text = (await readFile(flags.tokenFile, 'utf8')).trim();
    if (!text) throw new Error('the file is empty');
    return text;
  } catch (err) {
    throw new Error(`cannot read the token from ${flags.tokenFile}: ${(err as Error).message}`);
  }
}
