/**
 * Words that must say what the setting does (newcomer review): an MCP server's default policy is
 * not the same as "ask every time", and the files folders limit reading as well as writing.
 */
import { describe, expect, it } from 'vitest';
import { en } from '../../renderer/i18n/en.js';
import { zhCN } from '../../renderer/i18n/zh-CN.js';

describe('choice words', () => {
  it('an MCP server’s default policy says trusted read-only tools run, unlike "ask every time", in both languages', () => {
    // The hub's default: ask, except a trusted server's tools that claim to only read.
    expect(en.mcp.policyDefault).not.toBe(en.policy.ask);
    expect(en.mcp.policyDefault).toMatch(/trusted/i);
    expect(en.mcp.policyDefault).toMatch(/read-only/i);
    expect(zhCN.mcp.policyDefault).not.toBe(zhCN.policy.ask);
    expect(zhCN.mcp.policyDefault).toContain('受信任');
    expect(zhCN.mcp.policyDefault).toContain('只读');
  });

  it('the files folders are where file services may work at all, not only write, in both languages', () => {
    expect(en.settings.roots).not.toMatch(/write/i);
    expect(en.settings.roots).toMatch(/file services/i);
    expect(zhCN.settings.roots).not.toContain('写入');
    expect(zhCN.settings.roots).toContain('文件服务');
  });
});
