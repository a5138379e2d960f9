import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededIds } from '../../../app/ids.js';
import {
  generateClientId,
  generateDeviceId,
  isClientId,
  isDeviceId,
  normaliseClientId,
  normaliseDeviceId,
  normaliseRobotMac,
  orThrow,
} from '../../../app/wire/kit/identity.js';

describe('device identity (XiaoZhi Device-Id / Client-Id, robot mac_addr)', () => {
  it('generates locally administered unicast MACs, never a real card address', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), (seed) => {
        const mac = generateDeviceId(seededIds(seed));
        expect(isDeviceId(mac)).toBe(true);
        const first = parseInt(mac.slice(0, 2), 16);
        expect(first & 0x02).toBe(0x02); // locally administered
        expect(first & 0x01).toBe(0); // unicast
      }),
    );
  });

  it('generates version 4 UUIDs with the RFC 4122 variant', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), (seed) => {
        const id = generateClientId(seededIds(seed));
        expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(isClientId(id)).toBe(true);
      }),
    );
  });

  it('is repeatable from the same id source (a stored profile keeps its identity)', () => {
    expect(generateDeviceId(seededIds(7))).toBe(generateDeviceId(seededIds(7)));
    expect(generateClientId(seededIds(7))).toBe(generateClientId(seededIds(7)));
  });

  it('normalises MACs as users paste them', () => {
    for (const input of [
      'AA:BB:CC:DD:EE:FF',
      'aa-bb-cc-dd-ee-ff',
      'aabbccddeeff',
      ' Aa:bB:cc:dd:ee:ff ',
    ])
      expect(normaliseDeviceId(input)).toEqual({ ok: true, value: 'aa:bb:cc:dd:ee:ff' });
    expect(orThrow(normaliseRobotMac('aa:bb:cc:dd:ee:ff'))).toBe('AA-BB-CC-DD-EE-FF');
  });

  it('refuses what is not a MAC, with a message showing the expected form', () => {
    for (const input of [
      '',
      'aa:bb:cc:dd:ee',
      'aab:bcc:dd:ee:ff',
      'gg:bb:cc:dd:ee:ff',
      'aa:bb:cc:dd:ee:ff:00',
    ]) {
      const r = normaliseDeviceId(input);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.message).toMatch(/aa:bb:cc:dd:ee:ff/);
    }
    expect(() => orThrow(normaliseDeviceId('nope'))).toThrow(/not a MAC address/);
  });

  it.each([
    ['aa:bb:cc:dd:ee:ff', 'AA-BB-CC-DD-EE-FF'],
    ['AA-BB-CC-DD-EE-FF', 'AA-BB-CC-DD-EE-FF'],
    ['00:11:22:33:44:55', '00-11-22-33-44-55'],
    ['a1b2c3d4e5f6', 'A1-B2-C3-D4-E5-F6'],
    [' aa-bb-cc-dd-ee-0f ', 'AA-BB-CC-DD-EE-0F'],
  ])('writes %s in the robot document’s form', (input, expected) => {
    expect(normaliseRobotMac(input)).toEqual({ ok: true, value: expected });
  });

  it.each(['', 'aa:bb:cc:dd:ee', 'aa:bb:cc:dd:ee:ff:00', 'gg:bb:cc:dd:ee:ff', 'aa:bb-cc:dd:ee:ff'])(
    'refuses %j as a robot MAC, saying the form it needs',
    (input) => {
      const r = normaliseRobotMac(input);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.message).toMatch(/AA-BB-CC-DD-EE-FF/);
    },
  );

  it('a generated MAC is a valid robot MAC too, locally administered', () => {
    const ids = seededIds(7);
    for (let i = 0; i < 50; i++) {
      const mac = orThrow(normaliseRobotMac(generateDeviceId(ids)));
      expect(orThrow(normaliseRobotMac(mac))).toBe(mac);
      expect(parseInt(mac.slice(0, 2), 16) & 0x03).toBe(0x02);
    }
  });

  it('normalises client ids to lowercase and refuses non-UUIDs', () => {
    expect(normaliseClientId('{123E4567-E89B-12D3-A456-426614174000}')).toEqual({
      ok: true,
      value: '123e4567-e89b-12d3-a456-426614174000',
    });
    const bad = normaliseClientId('client-1');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toMatch(/not a UUID/);
  });
});
