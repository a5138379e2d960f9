/**
 * One frame of a screen the user picks with getDisplayMedia, scaled down and JPEG-encoded small
 * enough for the browser host's bridge (at lower sizes and qualities until it fits).
 */
import type { ScreenCapture } from '../../../app/contract/index.js';
import { MAX_BASE64, MAX_WIDTH, scaledSize } from './screen.js';

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** One frame of a screen the user picks; rejects when they cancel the browser's picker. */
export async function captureScreen(): Promise<ScreenCapture> {
  const stream = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: false });
  try {
    const video = document.createElement('video');
    video.muted = true;
    video.srcObject = stream;
    await video.play();
    if (!video.videoWidth)
      await new Promise((r) => video.addEventListener('resize', r, { once: true }));
    for (const [maxWidth, quality] of [
      [MAX_WIDTH, 0.8],
      [1280, 0.7],
      [960, 0.6],
    ] as const) {
      const size = scaledSize(video.videoWidth, video.videoHeight, maxWidth);
      const canvas = document.createElement('canvas');
      canvas.width = size.width;
      canvas.height = size.height;
      canvas.getContext('2d')!.drawImage(video, 0, 0, size.width, size.height);
      const blob = await new Promise<Blob | null>((r) => canvas.toBlob(r, 'image/jpeg', quality));
      if (!blob) continue;
      const data = toBase64(new Uint8Array(await blob.arrayBuffer()));
      if (data.length <= MAX_BASE64) return { data, mimeType: 'image/jpeg', ...size };
    }
    throw new Error('the screen picture is too large to send');
  } finally {
    for (const track of stream.getTracks()) track.stop();
  }
}
