/**
 * Who the agent says it is to a XiaoZhi server: a `Device-Id` shaped like a MAC address and a
 * `Client-Id` UUID, generated once per profile and stored (protocols/xiaozhi.md B, Connect).
 * Servers key their memory and device binding on these, so they must stay stable; generated MACs
 * are locally administered unicast addresses, which no real network card carries.
 */
import type { IdSource } from '../../ids.js';

export type Checked = { ok: true; value: string } | { ok: false; message: string };

const MAC = /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A locally administered (bit 1 of the first byte set), unicast (bit 0 clear) MAC, lowercase. */
export function generateDeviceId(ids: IdSource): string {
  const bytes = hexBytes(ids.hex(12));
  bytes[0] = (bytes[0]! | 0x02) & 0xfe;
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/** A random (version 4, RFC 4122 variant) UUID, lowercase. */
export function generateClientId(ids: IdSource): string {
  const b = hexBytes(ids.hex(32));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * A device id as users paste it (`AA-BB-CC-DD-EE-FF`, `aabbccddeeff`, `aa:bb:…`) in the form
 * servers expect: lowercase, colon-separated.
 */
export function normaliseDeviceId(input: string): Checked {
  const raw = input.trim().toLowerCase();
  const hex = raw.replace(/[:-]/g, '');
  const grouped = /^[0-9a-f]{12}$/.test(hex) ? hex.match(/../g)!.join(':') : '';
  // Separators, when present, must sit between every pair (no "aab:bcc…").
  const separated = raw.includes(':') || raw.includes('-');
  if (!grouped || (separated && raw.replace(/-/g, ':') !== grouped))
    return {
      ok: false,
      message: `the device id '${input}' is not a MAC address like aa:bb:cc:dd:ee:ff`,
    };
  return { ok: true, value: grouped };
}

/**
 * A MAC in lowercase with `separator` between the bytes (XiaoZhi: ':'; the robot dialect: '-').
 * Throws an Error a user can act on when it is not a MAC.
 */
export function normaliseMac(input: string, separator: ':' | '-' = ':'): string {
  const checked = normaliseDeviceId(input);
  if (!checked.ok) throw new Error(checked.message);
  return separator === ':' ? checked.value : checked.value.replace(/:/g, '-');
}

/** A client id in canonical lowercase form; any UUID version is accepted. */
export function normaliseClientId(input: string): Checked {
  const value = input
    .trim()
    .toLowerCase()
    .replace(/^\{|\}$/g, '');
  if (!UUID.test(value))
    return {
      ok: false,
      message: `the client id '${input}' is not a UUID like 123e4567-e89b-42d3-a456-426614174000`,
    };
  return { ok: true, value };
}

export function isDeviceId(value: string): boolean {
  return MAC.test(value);
}

export function isClientId(value: string): boolean {
  return UUID.test(value);
}

function hexBytes(hex: string): number[] {
  const out: number[] = [];
  for (let i = 0; i + 1 < hex.length; i += 2) out.push(parseInt(hex.slice(i, i + 2), 16));
  return out;
}
