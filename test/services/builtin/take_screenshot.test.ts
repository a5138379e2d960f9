import { afterEach, describe, expect, it } from 'vitest';
import { takeScreenshotService } from '../../../app/services/builtin/take_screenshot.js';
import { createFilesSandbox } from '../../../app/services/files/sandbox.js';
import type { ScreenImage, ScreenSource } from '../../../app/services/platform/desktop.js';
import { ServiceFailure, type ServiceContext } from '../../../app/services/service.js';
import { VisionSim } from '../../../sim/xiaozhi/vision.js';
import { CLIENT_ID, DEVICE_ID, closeOpenPair, open } from '../../wire/xiaozhi/harness.js';
import { context } from '../helpers.js';
import { RecordingRunner, recordedDesktop } from '../platform/recorder.js';

/** The first bytes of a JPEG and a little body: the vision service checks the magic number. */
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2048, 7)]);
const shot: ScreenImage = { data: JPEG, mimeType: 'image/jpeg', width: 1280, height: 720 };
const screen: ScreenSource = async () => shot;

const visions: VisionSim[] = [];
afterEach(async () => {
  await closeOpenPair();
  await Promise.all(visions.splice(0).map((v) => v.stop()));
});

const base = context(createFilesSandbox({ roots: () => [], maxFileBytes: () => 1 }));
const ctx = (over: Partial<ServiceContext>): ServiceContext => ({
  ...base,
  connection: { id: 'p1', name: 'Home server' },
  ...over,
});

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

describe('take_screenshot', () => {
  it('is private: the prompt says what leaves the computer and to which server', async () => {
    const service = takeScreenshotService(recordedDesktop(new RecordingRunner(), { screen }));
    expect(service).toMatchObject({ risk: 'private', group: 'screen' });
    const vision = { url: 'http://vision.example:8003/mcp/vision/explain', token: 't' };
    const preview = (params: { question?: string }, c: ServiceContext) =>
      Promise.resolve(service.preview!(params, c)).then((p) => p.summary);
    expect(await preview({ question: 'what is this?' }, ctx({ dialect: 'xiaozhi', vision }))).toBe(
      "Capture your screen and send it with the question “what is this?” to Home server's vision service (vision.example:8003)",
    );
    expect(await preview({}, ctx({ dialect: 'endpoint' }))).toBe(
      'Capture your screen and send the picture to Home server',
    );
    expect(await preview({}, ctx({ dialect: 'local' }))).toBe(
      'Capture your screen (the picture stays on this computer)',
    );
  });

  it('refuses clearly where it cannot: no screen in this host, a connection that cannot carry images', async () => {
    const headless = takeScreenshotService(recordedDesktop(new RecordingRunner()));
    expect(await failure(() => headless.preview!({}, ctx({ dialect: 'xiaozhi' })))).toMatchObject({
      code: 'unsupported',
      message:
        'the screen cannot be captured here (this agent runs without a screen, e.g. in a terminal); the desktop app or the browser window can',
    });
    const service = takeScreenshotService(recordedDesktop(new RecordingRunner(), { screen }));
    expect(await failure(() => service.preview!({}, ctx({ dialect: 'advent' })))).toMatchObject({
      code: 'unsupported',
      message:
        'this connection cannot carry images, so a screenshot cannot be sent; ask the user to describe the screen',
    });
    expect(
      await failure(() => service.preview!({ question: 'what?' }, ctx({ dialect: 'robot' }))),
    ).toMatchObject({
      code: 'unsupported',
    });
  });

  it('refuses a picture bigger than it ever sends', async () => {
    const huge: ScreenSource = async () => ({ ...shot, data: Buffer.alloc(5 * 1024 * 1024) });
    const service = takeScreenshotService(recordedDesktop(new RecordingRunner(), { screen: huge }));
    expect(await failure(() => service.run({}, ctx({ dialect: 'endpoint' })))).toMatchObject({
      code: 'file_too_large',
    });
  });
});

describe('take_screenshot through a XiaoZhi server (simulated, with its vision service)', () => {
  it('posts the picture to capabilities.vision with its token and the device identity, as the firmware does; the answer comes back', async () => {
    const vision = await VisionSim.start({
      token: 'vision-token',
      answer: (q) => `A code editor (you asked: ${q})`,
    });
    visions.push(vision);
    const p = await open({
      sim: {
        initializeParams: { capabilities: { vision: { url: vision.url, token: 'vision-token' } } },
      },
      agent: { desktop: { screen }, overrides: { policies: { take_screenshot: 'allow' } } },
    });
    await p.sim.waitForTools(1);
    const result = await p.sim.callTool('take_screenshot', { question: 'what is on my screen?' });
    expect(result).toMatchObject({
      isError: false,
      text: JSON.stringify({ answer: 'A code editor (you asked: what is on my screen?)' }),
    });
    expect(vision.uploads).toHaveLength(1);
    const upload = vision.uploads[0]!;
    expect(upload).toMatchObject({
      authorization: 'Bearer vision-token',
      deviceId: DEVICE_ID,
      clientId: CLIENT_ID,
      fieldOrder: ['question', 'file'],
      question: 'what is on my screen?',
      file: { filename: 'screen.jpg', contentType: 'image/jpeg' },
    });
    expect(upload.file!.data.equals(JPEG)).toBe(true);
    await p.agent.audit.flush();
    const [record] = (await p.agent.queryAudit({ service: 'take_screenshot' })).records;
    expect(record).toMatchObject({ outcome: 'ok', connection: 'XiaoZhi test' });
    // The token never reaches the audit log.
    expect(JSON.stringify(record)).not.toContain('vision-token');
  });

  it("the vision service's refusal (a wrong token) reaches the model in its words", async () => {
    const vision = await VisionSim.start({ token: 'right' });
    visions.push(vision);
    const p = await open({
      sim: { initializeParams: { capabilities: { vision: { url: vision.url, token: 'wrong' } } } },
      agent: { desktop: { screen }, overrides: { policies: { take_screenshot: 'allow' } } },
    });
    await p.sim.waitForTools(1);
    const result = await p.sim.callTool('take_screenshot', { question: 'what?' });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      "the server's vision service refused the picture: 无效的认证token或token已过期",
    );
  });

  it('without a vision service, the picture goes back as MCP image content', async () => {
    const p = await open({
      agent: { desktop: { screen }, overrides: { policies: { take_screenshot: 'allow' } } },
    });
    await p.sim.waitForTools(1);
    const result = await p.sim.callTool('take_screenshot', {});
    expect(result.isError).toBe(false);
    expect(result.text).toBe(
      "A screenshot of the user's screen (1280×720 JPEG, 2.0 KB) is attached.",
    );
    const content = (result.raw as { result: { content: unknown[] } }).result.content;
    expect(content[1]).toEqual({
      type: 'image',
      mimeType: 'image/jpeg',
      data: JPEG.toString('base64'),
    });
  });
});
