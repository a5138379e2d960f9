import type { SecretSource } from '../dialect.js';

/** A secret the connection cannot work without: read on every (re)connect, refused clearly when missing. */
export function requiredSecret(
  secret: SecretSource,
  what: string,
  name: string,
): () => Promise<string> {
  return async () => {
    const value = await secret();
    if (!value) throw new Error(`no ${what} is saved for '${name}'`);
    return value;
  };
}
