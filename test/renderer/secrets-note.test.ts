import i18next from 'i18next';
import { beforeEach, describe, expect, it } from 'vitest';
import { secretsPlace } from '../../renderer/lib/secrets.js';
import { useLanguage } from './i18n-helper.js';

/** What the token field and Settings say for a host whose SecretStore has this kind. */
const note = (kind: string) => i18next.t(`secrets.tokenNew.${secretsPlace({ kind })}`);
const place = (kind: string) => i18next.t(`secrets.place.${secretsPlace({ kind })}`, { kind });

describe('where a token is kept, per host', () => {
  beforeEach(() => useLanguage('en'));

  it('the browser and terminal hosts (a file store) say secrets.json in the data folder, never the keychain', () => {
    expect(secretsPlace({ kind: 'file' })).toBe('file');
    expect(note('file')).toContain('secrets.json');
    expect(note('file')).not.toMatch(/keychain/i);
    expect(place('file')).toContain('secrets.json');
  });

  it('the desktop app says the system keychain, or that protection is weak without a keyring', () => {
    expect(note('os-keychain')).toMatch(/system keychain/);
    expect(note('basic_text')).toMatch(/weak protection/);
    expect(note('basic_text')).not.toMatch(/keychain/i);
    expect(note('memory')).toMatch(/memory only/);
    expect(secretsPlace(undefined)).toBe('other');
  });

  it('a store it does not know is named as it is, with no promise about it', () => {
    expect(secretsPlace({ kind: 'vault-9' })).toBe('other');
    expect(place('vault-9')).toBe('vault-9');
    expect(note('vault-9')).not.toMatch(/keychain|secrets\.json/);
  });

  it('says the same in Chinese', async () => {
    await useLanguage('zh-CN');
    expect(note('file')).toContain('secrets.json');
    expect(note('file')).not.toContain('钥匙串');
    expect(note('os-keychain')).toContain('钥匙串');
  });
});
