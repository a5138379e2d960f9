/**
 * An imported server names itself in its initialize answer, and its row shows that name. A name
 * with a direction override, line breaks or zero-width characters could make the row read as
 * another server's, or spill onto lines of its own: it is shown as one clean line, cut.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { hasUnsafeChars } from '../../app/unsafe-chars.js';
import {
  type McpAgent,
  importConfig,
  openMcpAgent,
  ready,
  serverState,
} from '../services/mcp/helpers.js';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'mcp-import-server.mjs');

let rig: McpAgent | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('hostile MCP server: the name it gives itself', () => {
  it('is shown as one line without direction overrides or invisible characters, cut to 100', async () => {
    rig = await openMcpAgent();
    const { agent, dir } = rig;
    await importConfig(agent, dir, {
      spoof: {
        command: process.execPath,
        args: [SERVER],
        env: {
          SERVER_NAME: `Files\u202Eelif\u200B\nofficial\r\n${'x'.repeat(200)}`,
          SERVER_VERSION: `1.0\u2028.0`,
        },
      },
    });
    const view = await serverState(agent, 'spoof', ready);
    const info = view.serverInfo!;
    expect(info.name.startsWith('Fileselif official xx')).toBe(true);
    expect(info.name).toHaveLength(100);
    expect(hasUnsafeChars(info.name)).toBe(false);
    expect(info.name).not.toMatch(/[\r\n]/);
    expect(info.version).toBe('1.0 .0');
  }, 20_000);
});
