/**
 * Screen captures the core asks this page for (browser host): queued from `screenRequest`, gone on
 * `screenRequestDone`. The picture is taken with getDisplayMedia after the user picks a screen,
 * one frame, scaled down and JPEG-encoded small enough for the bridge.
 */
import { create } from 'zustand';
import type { ScreenCapture, ScreenRequest } from '../../../app/contract/index.js';
import type { Bridge } from '../../bridge/types.js';

interface ScreenStore {
  requests: ScreenRequest[];
  add(r: ScreenRequest): void;
  remove(id: string): void;
}

export const useScreenRequests = create<ScreenStore>()((set) => ({
  requests: [],
  add: (r) => set((s) => ({ requests: [...s.requests.filter((x) => x.id !== r.id), r].slice(-5) })),
  remove: (id) => set((s) => ({ requests: s.requests.filter((x) => x.id !== id) })),
}));

export function attachScreenRequests(bridge: Bridge): () => void {
  const offs = [
    bridge.on('screenRequest', (r) => useScreenRequests.getState().add(r)),
    bridge.on('screenRequestDone', ({ id }) => useScreenRequests.getState().remove(id)),
  ];
  return () => {
    for (const off of offs) off();
  };
}

export const MAX_WIDTH = 1600;
/** Under the browser host's 1 MiB message, with room for the JSON around it. */
export const MAX_BASE64 = 900_000;

/** The size to draw a `width`×`height` frame at: at most `maxWidth` wide, aspect kept. */
export function scaledSize(width: number, height: number, maxWidth = MAX_WIDTH) {
  const scale = Math.min(1, maxWidth / Math.max(1, width));
  return {
    width: Math.max(1, Math.round(width * scale)),
    height: Math.max(1, Math.round(height * scale)),
  };
}

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
