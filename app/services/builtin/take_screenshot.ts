import { IMAGE_DIALECTS, imageResult } from '../content.js';
import type { Desktop, ScreenImage } from '../platform/desktop.js';
import { askVision, visionUrl } from '../platform/vision.js';
import { ServiceFailure, type Service, type ServiceContext } from '../service.js';
import { formatBytes } from '../size.js';
import { quoted } from './reminder_common.js';

export type TakeScreenshotParams = { question?: string };

/** Bigger than any scaled-down screen picture a host sends; a bound on what leaves the computer. */
export const MAX_IMAGE_BYTES = 4 * 1024 * 1024;

type Route =
  { kind: 'vision'; host: string; question: string } | { kind: 'image' } | { kind: 'local' };

/** Where the picture goes for this call, or the refusal when it can go nowhere. */
function route(desktop: Desktop, params: TakeScreenshotParams, ctx: ServiceContext): Route {
  if (!desktop.screen)
    throw new ServiceFailure(
      'unsupported',
      'the screen cannot be captured here (this agent runs without a screen, e.g. in a terminal); the desktop app or the browser window can',
    );
  const question = params.question?.trim();
  const vision = visionUrl(ctx.vision);
  if (question && vision) return { kind: 'vision', host: vision.host, question };
  if (ctx.dialect === 'local') return { kind: 'local' };
  if (ctx.dialect && IMAGE_DIALECTS.has(ctx.dialect)) return { kind: 'image' };
  throw new ServiceFailure(
    'unsupported',
    question
      ? 'this server has no vision service (it announced none) and its connection cannot carry images, so the screen cannot be explained; ask the user to describe it'
      : 'this connection cannot carry images, so a screenshot cannot be sent; ask the user to describe the screen',
  );
}

function describe(image: ScreenImage): string {
  const kind = image.mimeType === 'image/png' ? 'PNG' : 'JPEG';
  return `${image.width}×${image.height} ${kind}, ${formatBytes(image.data.byteLength)}`;
}

export function takeScreenshotService(desktop: Desktop): Service<TakeScreenshotParams> {
  return {
    name: 'take_screenshot',
    title: 'Take a screenshot',
    summary:
      'Captures your screen and sends the picture to the server that asks (you are asked first).',
    group: 'screen',
    description:
      "Capture the user's screen. With question, the picture is sent to the server's vision service " +
      'and its answer is returned (e.g. question: "what is on my screen?"); otherwise the picture is ' +
      'returned as an image where the connection can carry one. The user is asked first.',
    parameters: {
      type: 'object',
      properties: {
        question: {
          type: 'string',
          maxLength: 500,
          description: 'What to find out about the screen, e.g. "what error is shown?"',
        },
      },
      additionalProperties: false,
    },
    risk: 'private',
    timeoutMs: 90_000,
    preview(params, ctx) {
      const r = route(desktop, params, ctx);
      const server = ctx.connection.name;
      switch (r.kind) {
        case 'vision':
          return {
            summary: `Capture your screen and send it with the question ${quoted(r.question)} to ${server}'s vision service (${r.host})`,
            resolvedPaths: [],
          };
        case 'image':
          return {
            summary: `Capture your screen and send the picture to ${server}`,
            resolvedPaths: [],
          };
        case 'local':
          return {
            summary: 'Capture your screen (the picture stays on this computer)',
            resolvedPaths: [],
          };
      }
    },
    async run(params, ctx) {
      const r = route(desktop, params, ctx);
      const image = await desktop.screen!({ connection: ctx.connection, signal: ctx.signal });
      if (image.data.byteLength > MAX_IMAGE_BYTES)
        throw new ServiceFailure(
          'file_too_large',
          `the screen picture is ${formatBytes(image.data.byteLength)}, more than the ${formatBytes(MAX_IMAGE_BYTES)} this agent sends`,
        );
      switch (r.kind) {
        case 'vision':
          return { answer: await askVision(ctx.vision!, image, r.question, ctx.signal) };
        case 'image':
          return imageResult(
            `A screenshot of the user's screen (${describe(image)}) is attached.`,
            image.mimeType,
            image.data,
          );
        case 'local':
          return { message: `Captured the screen (${describe(image)})` };
      }
    },
  };
}
