import { stat } from 'node:fs/promises';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectToAgent } from '../../app/mcp-serve/relay.js';
import { socketPath, socketProblem, tokenPath } from '../../app/mcp-serve/socket-path.js';
import { type ServeRig, startServe } from './helpers.js';
import path from 'node:path';

let rig: ServeRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const initialize = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'x', version: '1' },
  },
})}\n`;

/** Everything the agent says before it closes the connection (or 1 s passes). */
function exchange(first: string): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(socketPath(path.join(rig!.dir, 'data')));
    let text = '';
    s.on('data', (c: Buffer) => (text += c.toString()));
    s.on('error', () => undefined);
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ text, closed: false });
    }, 1000);
    s.once('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    s.write(first);
  });
}

describe("the running agent's socket for `advent-agent mcp`", () => {
  it('is private to the user: the socket and its token file are 0600', async () => {
    rig = await startServe();
    await rig.serve.listen();
    const dataDir = path.join(rig.dir, 'data');
    if (process.platform !== 'win32') {
      expect((await stat(socketPath(dataDir))).mode & 0o777).toBe(0o600);
      expect((await stat(tokenPath(dataDir))).mode & 0o777).toBe(0o600);
    }
  });

  it('a connection without the token is closed unanswered; with it, it is an MCP session', async () => {
    rig = await startServe();
    await rig.serve.listen();
    const wrong = await exchange(`not-the-token\n${initialize}`);
    expect(wrong).toEqual({ text: '', closed: true });

    const socket = (await connectToAgent(path.join(rig.dir, 'data')))!;
    expect(socket).toBeDefined();
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (c: Buffer) => {
        text += c.toString();
        if (text.includes('\n')) resolve(text);
      });
      socket.write(initialize);
    });
    socket.destroy();
    expect(JSON.parse(answer)).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });
  });

  it('no agent on a folder: nothing to relay to', async () => {
    rig = await startServe();
    expect(await connectToAgent(path.join(rig.dir, 'data'))).toBeUndefined();
  });

  it('a data folder path too long for a socket is said plainly', () => {
    expect(socketProblem(`/${'x'.repeat(200)}`, 'linux')).toMatch(/too long for a local socket/);
    expect(socketProblem('/home/u/.local/share/advent-agent', 'linux')).toBeUndefined();
    expect(socketPath('C:\\Users\\u\\AppData\\Roaming\\Advent Agent', 'win32')).toMatch(
      /^\\\\\.\\pipe\\advent-agent-mcp-[0-9a-f]{32}$/,
    );
  });
});
