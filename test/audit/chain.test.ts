import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalRecord, recordHash, recordMac } from '../../app/audit/chain.js';
import { canonicalJson, sha256Hex } from '../../app/audit/redact.js';

/** Any record the log could write or a reader could parse: names, numbers, JSON params. */
const anyRecord = fc.record(
  {
    seq: fc.integer({ min: 1 }),
    ts: fc.string(),
    phase: fc.constant('intent'),
    connection: fc.string({ unit: 'binary' }),
    connectionId: fc.string(),
    dialect: fc.string(),
    callId: fc.string({ unit: 'binary' }),
    service: fc.string(),
    params: fc.jsonValue(),
    paramsSha256: fc.string(),
    decision: fc.string(),
    outcome: fc.string(),
    error: fc.string(),
    message: fc.string({ unit: 'binary' }),
    waitMs: fc.double(),
    runMs: fc.double(),
    durationMs: fc.oneof(fc.double(), fc.constant(-0)),
    intentSeq: fc.integer(),
    prevHash: fc.string(),
    hash: fc.string(),
    mac: fc.string(),
    // A field a later version might add, of a kind the fast path does not write itself.
    extra: fc.oneof(fc.boolean(), fc.constant(null), fc.array(fc.integer())),
  },
  { requiredKeys: ['seq', 'ts', 'callId', 'params', 'prevHash'] },
);

describe('the text a record hash covers', () => {
  it('is canonicalJson of the record without hash and mac, whatever the record holds', () => {
    fc.assert(
      fc.property(anyRecord, (record) => {
        const { hash: _hash, mac: _mac, ...rest } = record;
        const expected = canonicalJson(rest);
        expect(canonicalRecord(record as never)).toBe(expected);
        expect(recordHash(record as never)).toBe(sha256Hex(expected));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('the record MAC', () => {
  it("is HMAC-SHA256 of the record's hash under the key, for any key", () => {
    fc.assert(
      fc.property(
        // Keys of every length around the 64-byte block, any characters; hashes as written.
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 100 }),
          fc.string({ minLength: 60, maxLength: 70 }),
        ),
        fc.stringMatching(/^[0-9a-f]{64}$/),
        (key, hash) => {
          const expected = createHmac('sha256', key)
            .update(`advent-audit-record\u0000${hash}`)
            .digest('hex');
          expect(recordMac(key, hash)).toBe(expected);
          expect(recordMac(key, hash)).toBe(expected); // the pads kept for the key give the same
        },
      ),
      { numRuns: 2000 },
    );
  });
});
