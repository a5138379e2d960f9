import { describe, expect, it } from 'vitest';
import { openUrlService } from '../../../app/services/builtin/open_url.js';
import { createFilesSandbox } from '../../../app/services/files/sandbox.js';
import { RunError } from '../../../app/services/platform/runner.js';
import { ServiceFailure } from '../../../app/services/service.js';
import { context } from '../helpers.js';
import { RecordingRunner, recordedDesktop } from '../platform/recorder.js';

const ctx = context(createFilesSandbox({ roots: () => [], maxFileBytes: () => 1 }));

function setup(platform: 'linux' | 'darwin' | 'win32' = 'linux', answer?: () => RunError) {
  const runner = new RecordingRunner(answer);
  return { runner, service: openUrlService(recordedDesktop(runner, { platform })) };
}

/** The refusal `fn` throws or rejects with (previews may throw before returning a promise). */
async function failure(fn: () => unknown): Promise<ServiceFailure> {
  const err = await Promise.resolve()
    .then(fn)
    .then(
      () => new Error('expected a refusal'),
      (e: unknown) => e,
    );
  if (err instanceof ServiceFailure) return err;
  throw err;
}

describe('open_url', () => {
  it('shows the exact address in the prompt and opens that address with xdg-open (recorded)', async () => {
    const { runner, service } = setup();
    const preview = await service.preview!({ url: 'https://Example.com/path?q=1&r=2#top' }, ctx);
    expect(preview).toEqual({
      summary: 'Open https://example.com/path?q=1&r=2#top in your web browser',
      resolvedPaths: [],
    });
    expect(await service.run({ url: 'https://Example.com/path?q=1&r=2#top' }, ctx)).toEqual({
      message: 'Opened https://example.com/path?q=1&r=2#top in the browser',
    });
    expect(runner.calls).toEqual([
      { kind: 'launch', cmd: 'xdg-open', args: ['https://example.com/path?q=1&r=2#top'] },
    ]);
  });

  it('takes a bare host as https, and shows an international name in its ASCII form', async () => {
    const { service } = setup();
    expect((await service.preview!({ url: 'example.com' }, ctx)).summary).toBe(
      'Open https://example.com/ in your web browser',
    );
    expect((await service.preview!({ url: 'https://аpple.com/' }, ctx)).summary).toBe(
      'Open https://xn--pple-43d.com/ in your web browser',
    );
  });

  it.each([
    ['file:///etc/passwd', "'file:' addresses are not opened"],
    ['javascript:alert(1)', "'javascript:' addresses are not opened"],
    ['vscode://file/x', "'vscode:' addresses are not opened"],
    ['data:text/html,<b>x</b>', "'data:' addresses are not opened"],
    [
      'https://bank.example@evil.example/',
      'the address contains a user name or password before the host',
    ],
    ['https://example.com/\u202egnp.exe', 'the address contains spaces or control characters'],
    ['not a url', 'the address contains spaces or control characters'],
    ['nonsense', "'nonsense' is not a web address"],
  ])('refuses %j before anyone is asked: %s', async (url, why) => {
    const { runner, service } = setup();
    const refusal = await failure(() => service.preview!({ url }, ctx));
    expect(refusal.code).toBe('invalid_params');
    expect(refusal.message).toBe(`${why}; only http:// and https:// web addresses can be opened`);
    expect(runner.calls).toEqual([]);
  });

  it('builds the macOS and Windows commands exactly', async () => {
    const mac = setup('darwin');
    await mac.service.run({ url: 'http://example.com/?a=1&b=2' }, ctx);
    expect(mac.runner.calls).toEqual([
      { kind: 'launch', cmd: 'open', args: ['http://example.com/?a=1&b=2'] },
    ]);
    const win = setup('win32');
    await win.service.run({ url: 'http://example.com/?a=1&b=2' }, ctx);
    expect(win.runner.calls).toEqual([
      {
        kind: 'launch',
        cmd: 'rundll32.exe',
        args: ['url.dll,FileProtocolHandler', 'http://example.com/?a=1&b=2'],
      },
    ]);
  });

  it('says clearly when no opener is installed or it fails', async () => {
    const missing = setup('linux', () => new RunError('not_found', 'xdg-open is not installed'));
    const a = await failure(() => missing.service.run({ url: 'https://example.com' }, ctx));
    expect(a.code).toBe('unsupported');
    expect(a.message).toBe(
      'opening https://example.com/ is not possible on this computer: xdg-open is not installed',
    );
    const broken = setup('linux', () => new RunError('failed', 'xdg-open failed (exit code 3)'));
    const b = await failure(() => broken.service.run({ url: 'https://example.com' }, ctx));
    expect(b.code).toBe('service_error');
  });

  it('asks before opening (risk system), in the apps group', () => {
    expect(setup().service).toMatchObject({ name: 'open_url', risk: 'system', group: 'apps' });
  });
});
