import { describe, expect, it } from 'vitest';
import { resultText } from '../../../app/services/mcp/result.js';
import { inlineRefs, readTools } from '../../../app/services/mcp/tools.js';
import { MCP_LIMITS } from '../../../app/services/mcp/limits.js';

describe('tool results as text for the voice servers', () => {
  it('joins text blocks and describes what is not text', () => {
    const r = resultText({
      content: [
        { type: 'text', text: 'a' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///x.bin', blob: 'AAAAAAAA' } },
        { type: 'hologram' },
      ],
    });
    expect(r.text).toBe(
      [
        'a',
        '[audio (audio/wav, 3 B) not shown: voice servers receive text only]',
        '[resource file:///x.bin (binary, 6 B) not shown: voice servers receive text only]',
        '[hologram content not shown]',
      ].join('\n'),
    );
  });

  it('cuts at the byte limit without splitting a character, and says so', () => {
    const r = resultText({ content: [{ type: 'text', text: '日本語'.repeat(2000) }] }, 100);
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(100);
    expect(r.text).not.toContain('\uFFFD');
    expect(r.text).toMatch(/…\[cut: the result was 18000 bytes/);
  });

  it('says something for an empty result', () => {
    expect(resultText({ content: [] }).text).toBe('(no output)');
    expect(resultText({ isError: true }).text).toBe('the tool failed and gave no reason');
  });
});

describe('reading what a server lists', () => {
  it('takes the good tools and names the problem of each bad one', () => {
    const deep: Record<string, unknown> = { type: 'object' };
    let at = deep;
    for (let i = 0; i < 40; i++) {
      const next: Record<string, unknown> = { type: 'object' };
      at.properties = { x: next };
      at = next;
    }
    const { tools, problems } = readTools([
      {
        name: 'ok',
        inputSchema: { type: 'object' },
        annotations: { title: 'Okay', readOnlyHint: true },
      },
      { name: 'ok', inputSchema: { type: 'object' } },
      { inputSchema: { type: 'object' } },
      { name: 'arr', inputSchema: { type: 'array' } },
      { name: 'huge', inputSchema: { type: 'object', description: 'x'.repeat(70_000) } },
      { name: 'deep', inputSchema: deep },
      { name: 'long', description: 'd'.repeat(10_000), inputSchema: { type: 'object' } },
    ]);
    expect(tools.map((t) => [t.name, t.title])).toEqual([
      ['ok', 'Okay'],
      ['long', 'long'],
    ]);
    expect(tools[0]!.hint).toEqual({ readOnly: true });
    expect(tools[1]!.description.length).toBe(MCP_LIMITS.descriptionChars);
    expect(problems.map((p) => `${p.tool}: ${p.problem}`)).toEqual([
      'ok: listed twice; the first one is used',
      '?: a listed tool has no name',
      'arr: its input schema is not of type "object"',
      expect.stringMatching(/^huge: its input schema is \d+ bytes; at most 65536/),
      'deep: its input schema nests deeper than 32 levels',
    ]);
  });

  it('takes at most the tool limit from one server', () => {
    const many = Array.from({ length: 300 }, (_, i) => ({
      name: `t${i}`,
      inputSchema: { type: 'object' },
    }));
    const { tools, problems } = readTools(many);
    expect(tools).toHaveLength(MCP_LIMITS.toolsPerServer);
    expect(problems.at(-1)!.problem).toMatch(/only the first 256 are taken/);
  });

  it('inlines local $refs for the servers, and a cycle becomes an open schema', () => {
    const schema = {
      type: 'object',
      $defs: {
        point: { type: 'object', properties: { x: { type: 'number' } } },
        node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } },
      },
      properties: {
        at: { $ref: '#/$defs/point', description: 'where' },
        list: { $ref: '#/$defs/node' },
      },
    };
    expect(inlineRefs(schema)).toEqual({
      type: 'object',
      properties: {
        at: { type: 'object', properties: { x: { type: 'number' } }, description: 'where' },
        list: { type: 'object', properties: { next: {} } },
      },
    });
  });
});
