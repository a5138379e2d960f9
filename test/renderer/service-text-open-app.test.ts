/**
 * open_app's prompt in Chinese keeps every warning the core wrote: its launcher, and the program
 * or file it runs, when either lies in a folder servers can write to (the core's own sentences,
 * from real launchers in temp folders).
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openAppService } from '../../app/services/builtin/open_app.js';
import { createFilesSandbox } from '../../app/services/files/sandbox.js';
import { callSentence } from '../../renderer/i18n/service-text.js';
import { context, tempDirs } from '../services/helpers.js';
import { RecordingRunner, recordedDesktop } from '../services/platform/recorder.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

async function file(full: string, text: string): Promise<void> {
  await mkdir(path.dirname(full), { recursive: true });
  await writeFile(full, text);
}

/** The core's sentence for an app whose launcher (in `apps`) runs `exec`, with `root` allowed. */
async function coreSentence(root: string, apps: string, exec: string): Promise<string> {
  await file(
    path.join(apps, 'backup.desktop'),
    `[Desktop Entry]\nType=Application\nName=Backup\nExec=${exec}\n`,
  );
  const desktop = recordedDesktop(new RecordingRunner(), { platform: 'linux', appDirs: [apps] });
  const ctx = context(createFilesSandbox({ roots: () => [root], maxFileBytes: () => 1 }));
  return (await openAppService(desktop).preview!({ id: 'backup' }, ctx)).summary;
}

const zh = (core: string) =>
  callSentence('zh-CN', { service: 'open_app', connection: { id: 's', name: 'Server' } }, core);

describe('open_app in Chinese', () => {
  it('keeps the warning about the program a launcher runs from an allowed folder', async () => {
    const base = await dirs.make();
    const root = path.join(base, 'allowed');
    const tool = path.join(root, 'tools', 'backup.sh');
    await file(tool, '#!/bin/sh\n');
    await chmod(tool, 0o755);
    const core = await coreSentence(root, path.join(base, 'applications'), tool);
    expect(core).toContain(`; careful: its program ${tool} is in a folder`);
    expect(zh(core)).toBe(
      `打开应用“Backup”（backup）：将运行 ${tool}；注意：它运行的程序 ${tool} 位于服务器可以写入的文件夹中`,
    );
  });

  it('keeps both warnings, and names a file the command is given', async () => {
    const base = await dirs.make();
    const root = path.join(base, 'allowed');
    const apps = path.join(root, 'applications');
    const script = path.join(root, 'tools', 'job.sh');
    await file(script, 'echo hi\n');
    const core = await coreSentence(root, apps, `/bin/sh ${script}`);
    const launcher = path.join(apps, 'backup.desktop');
    expect(zh(core)).toBe(
      `打开应用“Backup”（backup）：将运行 /bin/sh ${script}` +
        `；注意：它的启动文件 ${launcher} 位于服务器可以写入的文件夹中` +
        `；注意：它的参数所指的文件 ${script} 位于服务器可以写入的文件夹中`,
    );
  });
});
