import { describe, expect, it } from 'vitest';
import { newClusterId } from '../../../../infra/local/kafka-broker.js';

describe('local Kafka cluster ids', () => {
  it('are 22 base64url characters that never start with "-" (an option to kafka-storage)', () => {
    // One draw in 64 would start with "-" or "_": 2,000 draws meet both many times over.
    const ids = Array.from({ length: 2000 }, () => newClusterId());
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{21}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
