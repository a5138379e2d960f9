/**
 * A conformance peer nobody here wrote: the MCP Inspector's CLI mode against both transports —
 * `advent-agent mcp` over stdio (the built command) and the Streamable HTTP endpoint with its
 * bearer token. Needs `npm run build` first (npm test does).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ServeRig, startServe } from './helpers.js';

const require = createRequire(import.meta.url);
const repo = path.resolve(import.meta.dirname, '..', '..');
const bin = path.join(repo, 'bin', 'advent-agent.js');
const inspector = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
  'clients',
  'launcher',
  'build',
  'index.js',
);

let dir: string;
let rig: ServeRig | undefined;
beforeAll(() => {
  if (!existsSync(path.join(repo, 'dist', 'main', 'headless', 'cli.js')))
    throw new Error('run `npm run build` first: dist/main/headless/cli.js not found');
});
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The Inspector CLI with a home of its own (it keeps a catalog and secrets there). */
async function inspect(args: string[]): Promise<unknown> {
  dir ??= await mkdtemp(path.join(os.tmpdir(), 'advent-inspector-'));
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [inspector, '--cli', ...args],
      { env: { PATH: process.env.PATH, HOME: dir }, timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${err.message}\n${stderr}`));
        resolve(JSON.parse(stdout));
      },
    );
  });
}

describe('the MCP Inspector (CLI) against the agent', () => {
  it('over stdio: lists the tools with annotations and calls one', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'advent-inspector-'));
    const server = [process.execPath, bin, 'mcp', '--data-dir', path.join(dir, 'data')];
    const listed = (await inspect([...server, '--method', 'tools/list'])) as {
      tools: { name: string; annotations?: Record<string, unknown> }[];
    };
    expect(listed.tools.find((t) => t.name === 'create_file')?.annotations).toMatchObject({
      destructiveHint: true,
    });
    const called = (await inspect([
      ...server,
      '--method',
      'tools/call',
      '--tool-name',
      'get_current_time',
      '--tool-arg',
      'format=detailed',
    ])) as { content: { type: string; text: string }[]; isError?: boolean };
    expect(called.isError).toBeFalsy();
    expect(JSON.parse(called.content[0]!.text)).toHaveProperty('timezone');
  });

  it('over Streamable HTTP with the bearer token: lists and calls', async () => {
    rig = await startServe();
    await rig.serve.applyHttp({ enabled: true, port: 0 });
    const state = rig.serve.state();
    if (state.status !== 'listening') throw new Error(JSON.stringify(state));
    const token = await rig.serve.httpToken();
    const target = [state.url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`];
    const listed = (await inspect([...target, '--method', 'tools/list'])) as {
      tools: { name: string }[];
    };
    expect(listed.tools.map((t) => t.name)).toContain('get_current_time');
    const called = (await inspect([
      ...target,
      '--method',
      'tools/call',
      '--tool-name',
      'get_current_time',
    ])) as { isError?: boolean };
    expect(called.isError).toBeFalsy();
  });
});
