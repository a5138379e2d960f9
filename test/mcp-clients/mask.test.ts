import { describe, expect, it } from 'vitest';
import { configSecrets, maskSecrets } from '../../app/mcp-clients/mask.js';

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
    [
      '  "postgresql://admin:Pg-S3cret-pw@db.internal/prod"',
      '  "postgresql://admin:***@db.internal/prod"',
    ],
    ['  "X-API-Key: sk-live-abcdef"', '  "X-API-Key: ***"'],
    ['  "Authorization: Bearer sk-7",', '  "Authorization: ***",'],
    ['"https://h/sse?api_key=sk-8&x=1#token=sk-9"', '"https://h/sse?api_key=***&x=1#token=***"'],
    // A line cut short (diff lines are bounded) inside the value still hides what it shows of it.
    ['"env": { "GITHUB_TOKEN": "ghp_abcd', '"env": { "GITHUB_TOKEN": "***'],
    ['// was: API_KEY=sk-10', '// was: API_KEY=***'],
  ])('hides the credential in %s', (line, shown) => {
    expect(maskSecrets(line)).toEqual({ text: shown, masked: true });
  });

  it.each([
    '"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]',
    '"type": "stdio",',
    '"preferences": { "quickEntry": true }',
    '      }',
    '  "https://mcp.example.com/sse",',
    '  "Accept: text/event-stream"',
  ])('leaves %s as it is', (line) => {
    expect(maskSecrets(line)).toEqual({ text: line, masked: false });
  });
});

describe('a pretty-printed config, one argument per line', () => {
  // What JSON.stringify(config, null, 2) writes, as Claude Desktop's docs show it.
  const text = JSON.stringify(
    {
      mcpServers: {
        brave: { command: 'npx', args: ['-y', 'brave-mcp', '--api-key', 'BSA-live-0123456789'] },
        pg: { command: 'npx', args: ['postgresql://admin:Pg-S3cret-pw@db.internal/prod'] },
        remote: { command: 'npx', args: ['mcp-remote', '--header', 'X-API-Key: sk-live-abcdef'] },
        vault: { command: 'v', env: { VAULT_TOKEN: 'hvs.tok-1' }, headers: { Cookie: 'sid=1' } },
      },
    },
    null,
    2,
  );
  const shown = (secrets: ReadonlySet<string>) =>
    text
      .split('\n')
      .map((line) => maskSecrets(line, secrets).text)
      .join('\n');

  it('hides a value whose credential-named flag is on the line above, even with that line folded away', () => {
    const secrets = configSecrets(text);
    expect(maskSecrets('          "BSA-live-0123456789"', secrets)).toEqual({
      text: '          "***"',
      masked: true,
    });
    const all = shown(secrets);
    for (const secret of ['BSA-live-0123456789', 'Pg-S3cret-pw', 'sk-live-abcdef', 'hvs.tok-1'])
      expect(all).not.toContain(secret);
    expect(all).toContain('"--api-key",\n        "***"');
    expect(all).toContain('"VAULT_TOKEN": "***"');
    expect(all).toContain('"brave-mcp"');
    expect(all).toContain('"--header",\n        "X-API-Key: ***"');
  });

  it('finds the values in JSON with comments, and under no name a string is a key', () => {
    const secrets = configSecrets(
      undefined,
      '{ // theirs\n "servers": { "a": { "args": ["-k", "--token",\n "t-11",], "env": { "PASSWORD": "" } } } }',
      'not json',
    );
    expect([...secrets]).toEqual(['t-11']);
    expect(maskSecrets('"t-11": "t-11"', secrets).text).toBe('"t-11": "***"');
  });
});
