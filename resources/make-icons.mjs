#!/usr/bin/env node
// Draws the Advent Agent mark and writes every icon the packages need: PNGs (app, Linux icon set,
// tray, macOS tray template), icon.ico (PNG-compressed entries) and icon.icns (PNG entries).
// No image libraries: shapes are sampled 4×4 per pixel for anti-aliasing and encoded with zlib.
// Run `node resources/make-icons.mjs` after changing the design; the output is committed.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));

// --- PNG -----------------------------------------------------------------------------------

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** RGBA pixels (Uint8Array, row-major) → PNG bytes: 8-bit RGBA, no interlace, filter 0. */
export function encodePng(size, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type RGBA
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    Buffer.from(rgba.buffer, rgba.byteOffset + y * size * 4, size * 4).copy(
      raw,
      y * (size * 4 + 1) + 1,
    );
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// --- the mark ------------------------------------------------------------------------------
// A rounded square with an indigo→teal gradient; a white dot (the agent) sending two sound waves.

const FROM = [99, 102, 241]; // indigo
const TO = [20, 184, 166]; // teal

function insideRoundedSquare(x, y, margin, radius) {
  const lo = margin;
  const hi = 1 - margin;
  if (x < lo || x > hi || y < lo || y > hi) return false;
  const cx = Math.min(Math.max(x, lo + radius), hi - radius);
  const cy = Math.min(Math.max(y, lo + radius), hi - radius);
  return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
}

const WAVE_SPAN = (50 * Math.PI) / 180;
/** Full detail from 32 px up; below that one bolder wave, or the two would blur into one. */
const SYMBOL = { dot: { x: 0.36, y: 0.5, r: 0.1 }, waves: [0.23, 0.36], halfWidth: 0.035 };
const SMALL_SYMBOL = { dot: { x: 0.33, y: 0.5, r: 0.15 }, waves: [0.34], halfWidth: 0.075 };

function insideWave(x, y, radius, { dot, halfWidth }) {
  const dx = x - dot.x;
  const dy = y - dot.y;
  const d = Math.hypot(dx, dy);
  const angle = Math.atan2(dy, dx);
  if (Math.abs(angle) <= WAVE_SPAN && Math.abs(d - radius) <= halfWidth) return true;
  // Round caps at both ends of the arc.
  for (const a of [WAVE_SPAN, -WAVE_SPAN]) {
    const ex = dot.x + radius * Math.cos(a);
    const ey = dot.y + radius * Math.sin(a);
    if ((x - ex) ** 2 + (y - ey) ** 2 <= halfWidth ** 2) return true;
  }
  return false;
}

function insideSymbol(x, y, symbol) {
  const { dot, waves } = symbol;
  if ((x - dot.x) ** 2 + (y - dot.y) ** 2 <= dot.r ** 2) return true;
  return waves.some((r) => insideWave(x, y, r, symbol));
}

/**
 * Render the mark at `size` px. `style`: 'app' (gradient tile, white symbol), 'template' (black
 * symbol on transparent: macOS recolours tray templates itself).
 */
export function renderMark(size, style = 'app') {
  const rgba = new Uint8Array(size * size * 4);
  const S = 4;
  // Small tray icons use the whole canvas; app icons keep Apple's ~10% safe margin.
  const margin = style === 'app' ? (size >= 64 ? 0.09 : 0.02) : 0;
  const radius = 0.22;
  const shape = size < 32 ? SMALL_SYMBOL : SYMBOL;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let tile = 0;
      let symbol = 0;
      for (let sy = 0; sy < S; sy++) {
        for (let sx = 0; sx < S; sx++) {
          const x = (px + (sx + 0.5) / S) / size;
          const y = (py + (sy + 0.5) / S) / size;
          if (style === 'app' && insideRoundedSquare(x, y, margin, radius)) tile++;
          if (insideSymbol(x, y, shape)) symbol++;
        }
      }
      const i = (py * size + px) * 4;
      if (style === 'template') {
        rgba[i + 3] = Math.round((255 * symbol) / (S * S));
        continue;
      }
      const t = (px + py) / (2 * size);
      const bg = FROM.map((c, k) => c + (TO[k] - c) * t);
      // Symbol only shows on the tile; white over the gradient.
      const s = symbol / (S * S);
      const a = tile / (S * S);
      for (let k = 0; k < 3; k++) rgba[i + k] = Math.round(bg[k] * (1 - s) + 255 * s);
      rgba[i + 3] = Math.round(255 * a);
    }
  }
  return rgba;
}

// --- containers ----------------------------------------------------------------------------

/** ICO with PNG-compressed entries (Windows Vista+). */
export function encodeIco(entries) {
  const header = Buffer.alloc(6 + 16 * entries.length);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(entries.length, 4);
  let offset = header.length;
  entries.forEach(({ size, png }, n) => {
    const at = 6 + 16 * n;
    header[at] = size >= 256 ? 0 : size;
    header[at + 1] = size >= 256 ? 0 : size;
    header.writeUInt16LE(1, at + 4); // planes
    header.writeUInt16LE(32, at + 6); // bits per pixel
    header.writeUInt32LE(png.length, at + 8);
    header.writeUInt32LE(offset, at + 12);
    offset += png.length;
  });
  return Buffer.concat([header, ...entries.map((e) => e.png)]);
}

/** ICNS with PNG entries: ic07 128, ic08 256, ic09 512, ic10 1024 (512@2x). */
export function encodeIcns(entries) {
  const parts = entries.map(({ type, png }) => {
    const head = Buffer.alloc(8);
    head.write(type, 0, 'ascii');
    head.writeUInt32BE(8 + png.length, 4);
    return Buffer.concat([head, png]);
  });
  const head = Buffer.alloc(8);
  head.write('icns', 0, 'ascii');
  head.writeUInt32BE(8 + parts.reduce((n, p) => n + p.length, 0), 4);
  return Buffer.concat([head, ...parts]);
}

// --- write ---------------------------------------------------------------------------------

function main() {
  const cache = new Map();
  const png = (size, style = 'app') => {
    const key = `${style}:${size}`;
    if (!cache.has(key)) cache.set(key, encodePng(size, renderMark(size, style)));
    return cache.get(key);
  };
  const write = (name, bytes) => {
    const file = path.join(here, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, bytes);
    console.log(`${name} (${bytes.length} bytes)`);
  };

  write('icon.png', png(512));
  for (const size of [16, 32, 48, 64, 128, 256, 512]) write(`icons/${size}x${size}.png`, png(size));
  write('tray.png', png(16));
  write('tray@2x.png', png(32));
  // Linux StatusNotifier hosts draw tray icons at 22–24 px and do not pick @2x variants.
  write('trayLinux.png', png(24));
  write('trayTemplate.png', png(16, 'template'));
  write('trayTemplate@2x.png', png(32, 'template'));
  write(
    'icon.ico',
    encodeIco([16, 24, 32, 48, 64, 128, 256].map((size) => ({ size, png: png(size) }))),
  );
  write(
    'icon.icns',
    encodeIcns([
      { type: 'ic07', png: png(128) },
      { type: 'ic08', png: png(256) },
      { type: 'ic09', png: png(512) },
      { type: 'ic10', png: png(1024) },
    ]),
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
