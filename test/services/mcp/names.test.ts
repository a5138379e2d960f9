import { describe, expect, it } from 'vitest';
import { SERVICE_NAME } from '../../../app/services/service.js';
import { assignServiceNames, sanitise, serverPrefix } from '../../../app/services/mcp/names.js';

describe('service names for imported tools', () => {
  it('sanitises server and tool names to [a-z][a-z0-9_]*', () => {
    expect(sanitise('get-sum')).toBe('get_sum');
    expect(sanitise('My Files!')).toBe('my_files');
    expect(sanitise('Ünïcödé Tool')).toBe('unicode_tool');
    expect(sanitise('42things')).toBe('x42things');
    expect(sanitise('---')).toBe('x');
    expect(sanitise('读取文件')).toBe('x');
    expect(serverPrefix('GitHub (work)')).toBe('github_work');
  });

  it('names <server>_<tool>, every name valid and at most 64 characters', () => {
    const names = assignServiceNames(
      [
        { id: 'a', name: 'everything', tools: ['get-sum', 'echo'] },
        {
          id: 'b',
          name: 'a server with a really quite extraordinarily long name indeed',
          tools: ['and_a_tool_whose_name_is_also_far_longer_than_anyone_would_like_it_to_be'],
        },
      ],
      new Set(),
    );
    expect(Object.fromEntries(names.get('a')!)).toEqual({
      echo: 'everything_echo',
      'get-sum': 'everything_get_sum',
    });
    const long = [...names.get('b')!.values()][0]!;
    expect(long.length).toBeLessThanOrEqual(64);
    expect(long).toMatch(SERVICE_NAME);
    expect(long).toMatch(
      /^a_server_with_a_really_quite_extraordina_and_a_tool_[a-z_]*_[0-9a-f]{6}$/,
    );
  });

  it('resolves collisions the same way whatever order tools arrive in: built-ins first, then the longest server part, settings order, tools by name', () => {
    const servers = [
      { id: '1', name: 'create', tools: ['file', 'File'] },
      { id: '2', name: 'a', tools: ['b_c'] },
      { id: '3', name: 'a_b', tools: ['c'] },
    ];
    const once = assignServiceNames(servers, new Set(['create_file']));
    const reversedTools = assignServiceNames(
      servers.map((s) => ({ ...s, tools: [...s.tools].reverse() })),
      new Set(['create_file']),
    );
    expect(reversedTools).toEqual(once);
    expect(Object.fromEntries(once.get('1')!)).toEqual({
      File: 'create_file_2',
      file: 'create_file_3',
    });
    // The user named server 3 "a_b"; server 2's own tool name only imitates it.
    expect(once.get('3')!.get('c')).toBe('a_b_c');
    expect(once.get('2')!.get('b_c')).toBe('a_b_c_2');
  });

  it("a name given to one server's tool stays with it: another server's new tool never takes it, even while it is away", () => {
    const victim = { id: 'b', name: 'github-enterprise', tools: ['search'] };
    const first = assignServiceNames([victim], new Set());
    expect(first.get('b')!.get('search')).toBe('github_enterprise_search');
    // An earlier server in settings order starts listing a tool mapping to the same name while
    // the victim is restarting (no tools listed).
    const attacker = { id: 'a', name: 'github', tools: ['issues', 'enterprise_search'] };
    const away = assignServiceNames([attacker, { ...victim, tools: [] }], new Set(), first);
    expect(away.get('a')!.get('enterprise_search')).toBe('github_enterprise_search_2');
    const back = assignServiceNames([attacker, victim], new Set(), first);
    expect(back.get('b')!.get('search')).toBe('github_enterprise_search');
    expect(back.get('a')!.get('enterprise_search')).toBe('github_enterprise_search_2');
    // With nothing given before (the next start), the server the user named so still has it.
    const fresh = assignServiceNames([attacker, victim], new Set());
    expect(fresh.get('b')!.get('search')).toBe('github_enterprise_search');
    // A name a built-in came to use is given up.
    const builtin = assignServiceNames([victim], new Set(['github_enterprise_search']), first);
    expect(builtin.get('b')!.get('search')).toBe('github_enterprise_search_2');
  });
});
