/**
 * Who the agent says it is: a XiaoZhi `Device-Id` shaped like a MAC address and a `Client-Id`
 * UUID (protocols/xiaozhi.md B, Connect), and a robot's `mac_addr` (robot-rpc.md), generated once
 * per profile and stored. Servers key their memory and device binding on these, so they must stay
 * stable; generated MACs are locally administered unicast addresses, which no real network card
 * carries. One MAC rule for both dialects; only the written form differs.
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
  // Separators, when present, sit between every pair and are all the same: `aa:bb-cc…` is more
  // likely a typo than an address.
  const seps = new Set(raw.match(/[:-]/g) ?? []);
  const separated = seps.size > 0;
  if (!grouped || seps.size > 1 || (separated && raw.replace(/-/g, ':') !== grouped))
    return {
      ok: false,
      message: `the device id '${input}' is not a MAC address like aa:bb:cc:dd:ee:ff`,
    };
  return { ok: true, value: grouped };
}

/** A MAC as the robot dialect writes it: `AA-BB-CC-DD-EE-FF` (accepts the same inputs). */
export function normaliseRobotMac(input: string): Checked {
  const checked = normaliseDeviceId(input);
  if (!checked.ok)
    return {
      ok: false,
      message: `'${input}' is not a MAC address; the robot server needs one like AA-BB-CC-DD-EE-FF`,
    };
  return { ok: true, value: checked.value.replace(/:/g, '-').toUpperCase() };
}

/** The value, or an Error with the message (for settings and flags that must be valid). */
export function orThrow(checked: Checked): string {
  if (!checked.ok) throw new Error(checked.message);
  return checked.value;
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
