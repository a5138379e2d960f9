/**
 * XiaoZhi binary audio frames (protocols/xiaozhi.md B, "Binary audio"). The WebSocket frame
 * already delimits a packet, so a frame carries exactly one Opus packet; the protocol version the
 * device announced (`Protocol-Version` header and hello `version`) decides what wraps it:
 *
 * - version 1: the raw packet, nothing else;
 * - version 2: a 16-byte header `u16 version (=2), u16 type, u32 reserved, u32 timestamp_ms,
 *   u32 payload_size`, then the payload;
 * - version 3: a 4-byte header `u8 type, u8 reserved, u16 payload_size`, then the payload.
 *
 * All big-endian. `type` 0 is Opus audio, 1 is JSON (servers do not send it in practice).
 * A frame whose header disagrees with its length is refused with a message saying how, because
 * that is what a version mismatch between device and server looks like.
 */

export type ProtocolVersion = 1 | 2 | 3;

export const FRAME_TYPE = { OPUS: 0, JSON: 1 } as const;
export const V2_HEADER_BYTES = 16;
export const V3_HEADER_BYTES = 4;
/** v3 says the payload size in 16 bits. */
export const V3_MAX_PAYLOAD = 0xffff;
const U32 = 0x1_0000_0000;

export interface AudioFrame {
  /** 0 Opus, 1 JSON (always 0 in version 1). */
  type: number;
  /** Version 2 only (0 otherwise): milliseconds since the stream began, wrapping at 2^32. */
  timestampMs: number;
  payload: Buffer;
}

/** A frame that cannot be unwrapped; the message names the version and what is wrong. */
export class BinaryFrameError extends Error {
  override name = 'BinaryFrameError';
}

export function isProtocolVersion(v: unknown): v is ProtocolVersion {
  return v === 1 || v === 2 || v === 3;
}

/** Wrap one payload for `version`. Throws RangeError for what the header cannot express. */
export function encodeAudioFrame(
  version: ProtocolVersion,
  payload: Uint8Array,
  options: { type?: number; timestampMs?: number } = {},
): Buffer {
  const type = options.type ?? FRAME_TYPE.OPUS;
  switch (version) {
    case 1:
      if (type !== FRAME_TYPE.OPUS)
        throw new RangeError('protocol version 1 frames carry only Opus audio (type 0)');
      return Buffer.from(payload);
    case 2: {
      if (!Number.isInteger(type) || type < 0 || type > 0xffff)
        throw new RangeError(`a v2 frame type must fit in 16 bits, got ${type}`);
      const ts = options.timestampMs ?? 0;
      if (!Number.isFinite(ts) || ts < 0)
        throw new RangeError(`a v2 timestamp must be a non-negative number of ms, got ${ts}`);
      const out = Buffer.alloc(V2_HEADER_BYTES + payload.byteLength);
      out.writeUInt16BE(2, 0);
      out.writeUInt16BE(type, 2);
      out.writeUInt32BE(0, 4);
      // The field is 32 bits: a stream older than ~49 days wraps, as the firmware's does.
      out.writeUInt32BE(Math.floor(ts) % U32, 8);
      out.writeUInt32BE(payload.byteLength, 12);
      out.set(payload, V2_HEADER_BYTES);
      return out;
    }
    case 3: {
      if (!Number.isInteger(type) || type < 0 || type > 0xff)
        throw new RangeError(`a v3 frame type must fit in 8 bits, got ${type}`);
      if (payload.byteLength > V3_MAX_PAYLOAD)
        throw new RangeError(
          `a v3 frame carries at most ${V3_MAX_PAYLOAD} payload bytes, got ${payload.byteLength}`,
        );
      const out = Buffer.alloc(V3_HEADER_BYTES + payload.byteLength);
      out.writeUInt8(type, 0);
      out.writeUInt8(0, 1);
      out.writeUInt16BE(payload.byteLength, 2);
      out.set(payload, V3_HEADER_BYTES);
      return out;
    }
  }
}

/** Unwrap one binary WebSocket frame; throws BinaryFrameError when its header does not fit. */
export function decodeAudioFrame(version: ProtocolVersion, frame: Uint8Array): AudioFrame {
  const buf = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  switch (version) {
    case 1:
      return { type: FRAME_TYPE.OPUS, timestampMs: 0, payload: Buffer.from(buf) };
    case 2: {
      if (buf.length < V2_HEADER_BYTES)
        throw new BinaryFrameError(
          `a protocol v2 audio frame needs a ${V2_HEADER_BYTES}-byte header, got ${buf.length} bytes`,
        );
      const said = buf.readUInt16BE(0);
      if (said !== 2)
        throw new BinaryFrameError(
          `a protocol v2 audio frame says version ${said}; device and server disagree on Protocol-Version`,
        );
      const size = buf.readUInt32BE(12);
      checkSize(2, size, buf.length - V2_HEADER_BYTES);
      return {
        type: buf.readUInt16BE(2),
        timestampMs: buf.readUInt32BE(8),
        payload: Buffer.from(buf.subarray(V2_HEADER_BYTES)),
      };
    }
    case 3: {
      if (buf.length < V3_HEADER_BYTES)
        throw new BinaryFrameError(
          `a protocol v3 audio frame needs a ${V3_HEADER_BYTES}-byte header, got ${buf.length} bytes`,
        );
      const size = buf.readUInt16BE(2);
      checkSize(3, size, buf.length - V3_HEADER_BYTES);
      return {
        type: buf.readUInt8(0),
        timestampMs: 0,
        payload: Buffer.from(buf.subarray(V3_HEADER_BYTES)),
      };
    }
  }
}

function checkSize(version: 2 | 3, said: number, carried: number): void {
  if (said > carried)
    throw new BinaryFrameError(
      `a protocol v${version} audio frame says ${said} payload bytes but only ${carried} follow (truncated)`,
    );
  if (said < carried)
    throw new BinaryFrameError(
      `a protocol v${version} audio frame says ${said} payload bytes but ${carried} follow; device and server may disagree on Protocol-Version`,
    );
}
