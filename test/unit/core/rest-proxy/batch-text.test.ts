import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import {
  type BatchEntries,
  parseBatch,
} from '../../../../functions/core/rest-proxy/batch-input.js';
import { parsePlainBatch } from '../../../../functions/core/rest-proxy/batch-text.js';
import { parseJsonSequence } from '../../../../functions/core/rest-proxy/json-stream.js';
import { seededRandom } from '../../../chaos/random.js';

// parsePlainBatch reads the common batch body from its text: whatever it answers must be what the
// JSON path (the batch handler's before it: parseJsonSequence, then parseBatch) answers for the
// same text, field for field, byte for byte, in the same key order; a body it does not take
// (undefined) goes that path. Checked on bodies made to vary around the form it takes.

/** The same varied inputs every run (mulberry32, the chaos run's generator). */
const random = seededRandom;

/** What the JSON path answers for `text`: its entries, or the error it throws. */
function viaJson(text: string, max: number): BatchEntries | { error: unknown } {
  try {
    const values = parseJsonSequence(text, max);
    if (values.length > 1) return { error: 'several values' };
    return parseBatch(values[0] ?? null, max, false);
  } catch (error) {
    return { error };
  }
}

/** Entries as plain data, with every Buffer's bytes and every object's key order visible. */
function shown(batch: BatchEntries): unknown {
  const part = (data: unknown) => {
    if (data === undefined) return 'absent';
    const { type, bytes } = data as { type: string; bytes: Buffer | null };
    if (bytes !== null) expect(Buffer.isBuffer(bytes)).toBe(true);
    return {
      keys: Object.keys(data as object),
      type,
      bytes: bytes === null ? null : bytes.toString('hex'),
    };
  };
  return {
    ids: batch.ids,
    records: batch.records.map((r) => {
      const record = r as unknown as Record<string, unknown>;
      return {
        keys: Object.keys(record),
        partition: record.partition,
        key: part(record.key),
        value: part(record.value),
        headers: record.headers,
        timestamp: record.timestamp,
      };
    }),
  };
}

const TEXTS = [
  'k-1',
  '',
  'plain text with spaces',
  'say "hi"',
  'back\\slash',
  'tab\there',
  'new\nline',
  '\u0001',
  'déjà',
  '✓',
  '😀',
  '\ud800',
  '\u007f',
  '</script>',
  'null',
  '{"type":"STRING"}',
];
const BASE64 = ['AAEC', 'AAE=', 'AA==', 'AA', 'not base64!', '', 'A', '+/+/'];
const IDS = ['e1', 'a', 'B_2-x', 'x'.repeat(80), 'x'.repeat(81), '', 'bad id', 'é', 'dup'];

function body(seed: number): { text: string; max: number } {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)] as T;
  // Half the bodies are mostly of the plain form (one odd part in 50), half often odd.
  const oddness = next() < 0.5 ? 0.02 : 0.3;
  const odd = () => next() < oddness;
  const data = () => {
    if (!odd()) {
      return next() < 0.7
        ? { type: 'STRING', data: pick(['k-1', '', 'plain text', '</script>', 'null']) }
        : { type: 'BINARY', data: pick(['AAEC', 'AAE=', 'AA==', '+/+/']) };
    }
    const r = next();
    if (r < 0.5) return { type: 'STRING', data: pick(TEXTS) };
    if (r < 0.75) return { type: 'BINARY', data: pick(BASE64) };
    if (r < 0.8) return { type: pick(['STRING', 'BINARY']), data: null };
    if (r < 0.85) return { type: 'JSON', data: { a: 1 } };
    if (r < 0.9) return { data: 'x', type: 'STRING' };
    if (r < 0.95) return { type: 'STRING', data: 'x', extra: 1 };
    return null;
  };
  const count = 1 + Math.floor(next() * 6);
  const entries = Array.from({ length: count }, (_, i) => {
    const entry: Record<string, unknown> = {};
    const id = !odd() ? `e${i}` : pick(IDS);
    const fields: Array<[string, unknown]> = [];
    if (next() < 0.8) fields.push(['key', data()]);
    if (next() < 0.9) fields.push(['value', data()]);
    if (odd() && next() < 0.2) fields.push(['partition_id', pick([0, 2, -1, 1.5])]);
    if (odd() && next() < 0.2) fields.push(['headers', [{ name: 'h', value: 'AA==' }]]);
    if (odd() && next() < 0.2) fields.push(['timestamp', '2026-11-29T16:00:00Z']);
    if (!odd() || next() < 0.7) entry.id = id;
    if (odd() && next() < 0.2) fields.reverse();
    for (const [name, v] of fields) entry[name] = v;
    if (odd() && next() < 0.2) entry.id = id; // id after the record's fields
    return entry;
  });
  const r = odd() ? next() : 0;
  const text =
    r < 0.5
      ? JSON.stringify({ entries })
      : r < 0.85
        ? JSON.stringify({ entries }, null, 1)
        : r < 0.9
          ? `${JSON.stringify({ entries })} `
          : r < 0.93
            ? JSON.stringify({ entries, other: 1 })
            : r < 0.96
              ? JSON.stringify({ entries }).replace(/\}$/, ',"entries":[]}')
              : JSON.stringify({ entries }).slice(0, -1 - Math.floor(next() * 20));
  return { text, max: next() < 0.1 ? Math.max(0, count - 1) : 10 };
}

describe('parsePlainBatch', () => {
  it('answers what the JSON path answers, or leaves the body to it (2,000 varied bodies)', () => {
    let read = 0;
    let left = 0;
    for (let seed = 1; seed <= 2000; seed++) {
      const { text, max } = body(seed);
      const plain = parsePlainBatch(text, max);
      const json = viaJson(text, max);
      if (plain === undefined) {
        left++;
        continue;
      }
      read++;
      expect('error' in json, `seed ${seed}: ${text}`).toBe(false);
      expect(shown(plain), `seed ${seed}: ${text}`).toEqual(shown(json as BatchEntries));
    }
    // Both kinds were met: the check compared real readings, and left others to the JSON path.
    expect(read).toBeGreaterThan(300);
    expect(left).toBeGreaterThan(300);
    // CPU-bound: ~1.5 s alone, 6.7 s at load 15 on 2 cores (over Vitest's 5 s): the limit
    // allows for a busy machine; a wrong answer still fails it.
  }, 60_000);

  it('reads the bench body (1,000 STRING keys and values) as the JSON path does', () => {
    const text = JSON.stringify({
      entries: Array.from({ length: 1000 }, (_, i) => ({
        id: `e${i}`,
        key: { type: 'STRING', data: `k-${i}` },
        value: { type: 'STRING', data: `${i}:`.padEnd(100, 'x') },
      })),
    });
    const plain = parsePlainBatch(text, 1000);
    expect(plain).toBeDefined();
    expect(shown(plain as BatchEntries)).toEqual(shown(viaJson(text, 1000) as BatchEntries));
    // One entry over the limit: the JSON path refuses it (413-like 42208), so it is left there.
    expect(parsePlainBatch(text, 999)).toBeUndefined();
  });

  it('leaves to the JSON path what JSON refuses or reads otherwise', () => {
    const one = (data: string) =>
      `{"entries":[{"id":"a","value":{"type":"STRING","data":"${data}"}}]}`;
    expect(parsePlainBatch(one('ok'), 10)).toBeDefined();
    // A raw control character: JSON.parse refuses the body.
    expect(parsePlainBatch(one('a\u0001b'), 10)).toBeUndefined();
    expect('error' in viaJson(one('a\u0001b'), 10)).toBe(true);
    // An escape: JSON reads it as another character.
    expect(parsePlainBatch(one('a\\u0041'), 10)).toBeUndefined();
    // The same id twice, and an id that is not one: refused as a whole by parseBatch.
    const twice = '{"entries":[{"id":"a"},{"id":"a"}]}';
    expect(parsePlainBatch(twice, 10)).toBeUndefined();
    expect('error' in viaJson(twice, 10)).toBe(true);
    // Every cut of a body is left (none of them is JSON).
    const whole = one('abc');
    for (let end = 0; end < whole.length; end++) {
      expect(parsePlainBatch(whole.slice(0, end), 10)).toBeUndefined();
    }
  });
});
