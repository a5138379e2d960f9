/**
 * Is it text, and in which encoding: UTF-8 (with or without a BOM) or UTF-16 LE/BE by its BOM.
 * Anything else is refused with a reason the model can repeat to the user ("a PNG image", "not
 * UTF-8 or UTF-16 text"), never decoded into mojibake.
 */

export type TextEncoding = 'utf-8' | 'utf-8-bom' | 'utf-16le' | 'utf-16be';

export type Decoded =
  { ok: true; text: string; encoding: TextEncoding } | { ok: false; reason: string };

// Well-known binary formats by their first bytes, so the refusal can say what the file is.
const MAGIC: readonly [number[], string][] = [
  [[0x89, 0x50, 0x4e, 0x47], 'a PNG image'],
  [[0xff, 0xd8, 0xff], 'a JPEG image'],
  [[0x47, 0x49, 0x46, 0x38], 'a GIF image'],
  [[0x25, 0x50, 0x44, 0x46], 'a PDF document'],
  [[0x50, 0x4b, 0x03, 0x04], 'a ZIP archive (or an Office document)'],
  [[0x1f, 0x8b], 'a gzip archive'],
  [[0x7f, 0x45, 0x4c, 0x46], 'a program (ELF)'],
  [[0x4d, 0x5a], 'a Windows program'],
  [[0x52, 0x49, 0x46, 0x46], 'a RIFF file (audio or video)'],
  [[0x49, 0x44, 0x33], 'an MP3 audio file'],
  [[0x53, 0x51, 0x4c, 0x69, 0x74, 0x65], 'an SQLite database'],
];

// C0 controls other than tab, newlines, form feed, vertical tab and escape: rare in real text.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const ODD_CONTROLS = /[\u0000-\u0008\u000e-\u001a\u001c-\u001f\u007f]/g;
const MAX_CONTROL_SHARE = 0.02;

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  return magic.length <= bytes.length && magic.every((b, i) => bytes[i] === b);
}

function binaryReason(bytes: Uint8Array): string | undefined {
  for (const [magic, what] of MAGIC) if (startsWith(bytes, magic)) return `is ${what}`;
  if (bytes.includes(0)) return 'contains NUL bytes (binary data)';
  return undefined;
}

function tooManyControls(text: string): boolean {
  const controls = text.match(ODD_CONTROLS)?.length ?? 0;
  return controls > 0 && controls / Math.max(1, text.length) > MAX_CONTROL_SHARE;
}

/**
 * `complete` = these are all the file's bytes. A start of a file (for sniffing) may end inside a
 * character; that is not held against it.
 */
export function decodeText(bytes: Uint8Array, complete: boolean): Decoded {
  const utf16 =
    bytes[0] === 0xff && bytes[1] === 0xfe
      ? 'utf-16le'
      : bytes[0] === 0xfe && bytes[1] === 0xff
        ? 'utf-16be'
        : undefined;
  if (utf16) return decodeUtf16(bytes.subarray(2), utf16, complete);

  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const body = bom ? bytes.subarray(3) : bytes;
  const binary = binaryReason(body);
  if (binary) return { ok: false, reason: binary };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body, {
      stream: !complete,
    });
  } catch {
    return {
      ok: false,
      reason:
        'is not UTF-8 or UTF-16 text (it may be binary, or text in another encoding such as GBK or Latin-1)',
    };
  }
  if (tooManyControls(text)) return { ok: false, reason: 'holds control characters (binary data)' };
  return { ok: true, text, encoding: bom ? 'utf-8-bom' : 'utf-8' };
}

function decodeUtf16(body: Uint8Array, encoding: 'utf-16le' | 'utf-16be', complete: boolean) {
  let even = body;
  if (body.length % 2 === 1) {
    if (complete) return { ok: false as const, reason: 'is cut short (UTF-16 with an odd length)' };
    even = body.subarray(0, body.length - 1);
  }
  // TextDecoder's UTF-16BE is missing from Node builds without full ICU: swap to LE instead.
  const le = encoding === 'utf-16be' ? Buffer.from(even).swap16() : even;
  let text: string;
  try {
    text = new TextDecoder('utf-16le', { fatal: true, ignoreBOM: true }).decode(le, {
      stream: !complete,
    });
  } catch {
    return { ok: false as const, reason: `is not valid ${encoding.toUpperCase()} text` };
  }
  if (text.includes('\u0000') || tooManyControls(text)) {
    return { ok: false as const, reason: 'holds control characters (binary data)' };
  }
  return { ok: true as const, text, encoding };
}

/** What `encoding` means, for the model. */
export function encodingName(encoding: TextEncoding): string {
  switch (encoding) {
    case 'utf-8':
      return 'UTF-8';
    case 'utf-8-bom':
      return 'UTF-8 with BOM';
    case 'utf-16le':
      return 'UTF-16 LE';
    case 'utf-16be':
      return 'UTF-16 BE';
  }
}
