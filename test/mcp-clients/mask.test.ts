import { describe, expect, it } from 'vitest';
import { maskSecrets } from '../../app/mcp-clients/mask.js';

describe('config lines shown in a setup preview', () => {
  it.each([
    [
      '"env": { "GITHUB_TOKEN": "ghp_abc", "LOG": "debug" }',
      '"env": { "GITHUB_TOKEN": "***", "LOG": "debug" }',
    ],
    ['  "Authorization" : "Bearer sk-1",', '  "Authorization" : "***",'],
    [
      '"args": ["server.js", "--api-key", "sk-2", "--port", "80"]',
      '"args": ["server.js", "--api-key", "***", "--port", "80"]',
    ],
    ['"args": ["--token=sk-3", "--mode=fast"]', '"args": ["--token=***", "--mode=fast"]'],
    [
      '"url": "https://h/mcp?user=me&access_key=sk-4"',
      '"url": "https://h/mcp?user=me&access_key=***"',
    ],
    ['"args": ["--header", "X: Bearer sk-5"]', '"args": ["--header", "X: Bearer ***"]'],
    ['"API_KEY": "sk-\\"6\\""', '"API_KEY": "***"'],
  ])('hides the credential in %s', (line, shown) => {
    expect(maskSecrets(line)).toEqual({ text: shown, masked: true });
  });

  it.each([
    '"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]',
    '"type": "stdio",',
    '"preferences": { "quickEntry": true }',
    '      }',
  ])('leaves %s as it is', (line) => {
    expect(maskSecrets(line)).toEqual({ text: line, masked: false });
  });
});
