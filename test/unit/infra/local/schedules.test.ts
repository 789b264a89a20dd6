import { describe, expect, it } from 'vitest';
import { rateMs, readSchedules } from '../../../../infra/local/schedules.js';

describe('local schedules from serverless.yml', () => {
  it('reads rate() expressions into intervals', () => {
    expect(rateMs('rate(1 minute)')).toBe(60_000);
    expect(rateMs('rate(5 minutes)')).toBe(300_000);
    expect(rateMs('rate(2 hours)')).toBe(7_200_000);
    expect(rateMs('cron(0 12 * * ? *)')).toBeUndefined();
  });

  it('fires reconcile every minute and audit every 15 minutes by default, or at the configured rates', () => {
    expect(readSchedules({})).toEqual([
      { functionName: 'kafka-tally-local-reconcile', everyMs: 60_000 },
      { functionName: 'kafka-tally-local-audit', everyMs: 900_000 },
      // The canary's topic, audited with the input EventBridge would send.
      {
        functionName: 'kafka-tally-local-audit',
        everyMs: 900_000,
        input: { topic: 'tally-canary' },
      },
      { functionName: 'kafka-tally-local-canary', everyMs: 300_000 },
    ]);
    expect(readSchedules({ TALLY_CANARY_TOPIC: 'probe' })[2]?.input).toEqual({ topic: 'probe' });
    expect(readSchedules({ TALLY_RECONCILE_SCHEDULE: 'rate(10 minutes)' })[0]).toEqual({
      functionName: 'kafka-tally-local-reconcile',
      everyMs: 600_000,
    });
  });
});
