/**
 * One-click setup's refusals read as sentences for people in both languages, with the file they
 * are about, rather than as the core's English message.
 */
import i18next from 'i18next';
import { describe, expect, it } from 'vitest';
import { COMMAND_REFUSALS } from '../../app/contract/index.js';
import { BridgeError } from '../../renderer/bridge/types.js';
import { errorText } from '../../renderer/lib/labels.js';
import { useLanguage } from './i18n-helper.js';

const SETUP_CODES = COMMAND_REFUSALS.filter((c) => c.startsWith('mcp_client_'));
const params = {
  path: '/home/me/.cursor/mcp.json',
  app: 'Cursor',
  reason: 'it is not valid JSON',
  error: 'EACCES: permission denied',
};

describe('one-click setup refusals', () => {
  it('each has its own line in English and Chinese naming the file or the app', async () => {
    expect(SETUP_CODES).toHaveLength(4);
    for (const lang of ['en', 'zh-CN'] as const) {
      await useLanguage(lang);
      const lines = SETUP_CODES.map((code) =>
        errorText(i18next.t, new BridgeError(code, 'the core’s English sentence', params)),
      );
      for (const [i, line] of lines.entries()) {
        expect(line, SETUP_CODES[i]).not.toContain('commandRefusal.');
        expect(line, SETUP_CODES[i]).not.toContain('the core’s English sentence');
        if (lang === 'zh-CN') expect(line).toMatch(/\p{Script=Han}/u);
      }
      expect(new Set(lines).size).toBe(lines.length);
      expect(lines[0]).toContain('Cursor');
      expect(lines[1]).toContain('/home/me/.cursor/mcp.json');
    }
  });
});
