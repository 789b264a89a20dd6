import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../functions/core/shared/errors.js';
import { loadReconcileConfig } from '../../../functions/platform/config.js';

const ENV = {
  KAFKA_BROKERS: 'localhost:9092',
  TALLY_MAPPINGS_TABLE: 'tally-mappings',
  TALLY_OFFSET_HISTORY_TABLE: 'tally-offset-history',
  TALLY_RECONCILE_REPORTS_TABLE: 'tally-reconcile-reports',
};

describe('loadReconcileConfig: retention', () => {
  it('keeps 14 days of reports and 100 restores per group unless told otherwise', () => {
    expect(loadReconcileConfig(ENV)).toMatchObject({
      retentionMs: 14 * 86_400_000,
      restoresKept: 100,
    });
    expect(
      loadReconcileConfig({
        ...ENV,
        TALLY_RECONCILE_RETENTION_DAYS: '30',
        TALLY_RESTORE_RECORDS_KEPT: '10',
      }),
    ).toMatchObject({ retentionMs: 30 * 86_400_000, restoresKept: 10 });
  });

  it.each([
    ['TALLY_RECONCILE_RETENTION_DAYS', '0'],
    ['TALLY_RECONCILE_RETENTION_DAYS', '366'],
    ['TALLY_RESTORE_RECORDS_KEPT', '0'],
  ])('refuses %s=%s, naming it', (name, value) => {
    expect(() => loadReconcileConfig({ ...ENV, [name]: value })).toThrow(ConfigurationError);
    expect(() => loadReconcileConfig({ ...ENV, [name]: value })).toThrow(name);
  });
});

describe("loadReconcileConfig: Burrow's evaluator settings", () => {
  it("defaults to Burrow's: allowed-lag 0, minimum-complete 0", () => {
    expect(loadReconcileConfig(ENV)).toMatchObject({ allowedLag: 0, minimumComplete: 0 });
    expect(
      loadReconcileConfig({
        ...ENV,
        TALLY_BURROW_ALLOWED_LAG: '1',
        TALLY_BURROW_MINIMUM_COMPLETE: '0.5',
      }),
    ).toMatchObject({ allowedLag: 1, minimumComplete: 0.5 });
  });

  it.each([
    ['TALLY_BURROW_ALLOWED_LAG', '-1'],
    ['TALLY_BURROW_ALLOWED_LAG', '1.5'],
    ['TALLY_BURROW_MINIMUM_COMPLETE', '1.01'],
    ['TALLY_BURROW_MINIMUM_COMPLETE', 'half'],
  ])('refuses %s=%s, naming it', (name, value) => {
    expect(() => loadReconcileConfig({ ...ENV, [name]: value })).toThrow(ConfigurationError);
    expect(() => loadReconcileConfig({ ...ENV, [name]: value })).toThrow(name);
  });
});

describe('loadReconcileConfig: the Burrow cluster name', () => {
  it('is optional, and read when given', () => {
    expect(loadReconcileConfig(ENV).burrowClusterName).toBeUndefined();
    expect(
      loadReconcileConfig({ ...ENV, TALLY_BURROW_CLUSTER_NAME: ' prod-east ' }).burrowClusterName,
    ).toBe('prod-east');
  });
});
