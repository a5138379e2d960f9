/**
 * Secrets for a host started with a token on its command line: the user's saved store, with the
 * flag's token held in memory on top. A token given as a flag is for this run only; it must
 * never end up on disk just because the UI stores tokens through the same SecretStore.
 */
import { inspect } from 'node:util';
import { MemorySecretStore, type SecretStore } from '../../app/settings/secrets.js';

export class RunSecretStore implements SecretStore {
  readonly #base: SecretStore;
  readonly #memory = new MemorySecretStore();
  readonly #memoryKeys = new Set<string>();

  constructor(base: SecretStore) {
    this.#base = base;
  }

  /** Tokens live where the user saves them; the flag's token changes nothing about that. */
  get kind(): string {
    return this.#base.kind;
  }

  /** From now on `key` is kept in memory only: set and delete never touch the saved store. */
  keepInMemory(key: string): void {
    this.#memoryKeys.add(key);
  }

  get(key: string): Promise<string | undefined> {
    return this.#memoryKeys.has(key) ? this.#memory.get(key) : this.#base.get(key);
  }

  /** The store behind says whether a value it cannot read now is there (a locked keyring). */
  async has(key: string): Promise<boolean> {
    if (this.#memoryKeys.has(key)) return (await this.#memory.get(key)) !== undefined;
    return this.#base.has ? this.#base.has(key) : (await this.#base.get(key)) !== undefined;
  }

  set(key: string, value: string): Promise<void> {
    return this.#memoryKeys.has(key) ? this.#memory.set(key, value) : this.#base.set(key, value);
  }

  delete(key: string): Promise<void> {
    return this.#memoryKeys.has(key) ? this.#memory.delete(key) : this.#base.delete(key);
  }

  toString(): string {
    return `RunSecretStore(${String(this.#base)} + ${String(this.#memory)})`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
