/**
 * The ids the app gives its own connections ('local' for the user's own runs, 'mcp-clients' for
 * the MCP apps' selection, 'mcp:…' for each app) are not a profile's to take: saved under one, a
 * server would share their selection (offered everything), their pace and their questions.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../app/api.js';
import { MemorySecretStore } from '../app/settings/secrets.js';
import { validateSettings } from '../app/settings/validate.js';

let dir: string;
let api: CoreApi;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-ids-'));
  api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    version: '1.0.0',
    host: 'browser',
  });
});

afterEach(async () => {
  await api.close();
  await rm(dir, { recursive: true, force: true });
});

const home = { kind: 'advent', name: 'Home', host: '127.0.0.1', port: 9 } as const;

describe('reserved connection ids', () => {
  for (const id of ['local', 'mcp-clients', 'mcp:home', 'mcp:']) {
    it(`a profile cannot be saved as '${id}', and the refusal says why`, async () => {
      await expect(api.saveConnection({ ...home, id }, 'token')).rejects.toMatchObject({
        code: 'invalid_profile',
        message: `the id '${id}' is kept for the app's own connections; save the profile under another id`,
      });
      expect(api.agent.settings.get().connections).toEqual([]);
    });
  }

  it('ids that only look alike are a profile’s to take', async () => {
    for (const id of ['locals', 'mcp-home', 'my-mcp:x', 'p-1'])
      expect((await api.saveConnection({ ...home, id }, 'token')).id).toBe(id);
  });

  it('a settings file holding a profile under one is not trusted', async () => {
    const saved = await api.saveConnection(home, 'token');
    const settings = api.agent.settings.get();
    expect(validateSettings(settings).ok).toBe(true);
    const edited = { ...settings, connections: [{ ...settings.connections[0], id: 'local' }] };
    const check = validateSettings(edited);
    expect(check.ok).toBe(false);
    expect(saved.id).not.toBe('local');
  });
});
