import { describe, expect, it } from 'vitest';
import { publishAuditMetrics } from '../../../../functions/audit/metrics.js';
import type { AuditReport } from '../../../../functions/core/audit/ports.js';
import type { ReconcileReport } from '../../../../functions/core/reconcile/reconciler.js';
import { publishReconcileMetrics } from '../../../../functions/reconcile/metrics.js';
import {
  createAlarmEvaluator,
  type Datapoint,
  emfDatapoints,
  readAlarms,
} from '../../../../infra/local/alarms.js';
import { emittedMetrics } from '../../../helpers/emf.js';

// serverless.yml's alarms, evaluated over the metrics the functions really emit: a query whose
// SCHEMA does not name exactly the dimensions Powertools writes would never see a datapoint.

const reconcileRun = (status: 'OK' | 'WARN' | 'ERR'): ReconcileReport => ({
  runAt: '2026-11-30T00:00:00.000Z',
  complete: true,
  unreadable: [],
  adminCalls: 0,
  historyConflicts: 0,
  mappings: { written: 0, changed: 0, removed: 0, keptNewer: 0, details: [] },
  groups: [
    {
      group: 'billing',
      state: 'Stable',
      status,
      complete: 1,
      partitionCount: 0,
      maxLag: 0,
      totalLag: 0,
      maxTimeLagSeconds: 0,
      anomalies: {},
      partitions: [],
    },
  ],
});

const reconcilePoints = (status: 'OK' | 'WARN' | 'ERR') =>
  emfDatapoints(emittedMetrics(() => publishReconcileMetrics(reconcileRun(status))));

describe('the local evaluation of serverless.yml alarms', () => {
  it('reads the alarms on lost records, duplicates, group status ERR and the functions errors', () => {
    const ids = readAlarms().map((a) => a.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        'LostRecordsAlarm',
        'DuplicatesAlarm',
        'GroupStatusErrAlarm',
        'ReconcileErrorsAlarm',
        'AuditErrorsAlarm',
      ]),
    );
    expect(readAlarms().find((a) => a.id === 'GroupStatusErrAlarm')).toMatchObject({
      metric: 'GroupStatus',
      threshold: 3,
      comparison: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('changes the group status alarm once when a group turns ERR, and once when it recovers', () => {
    const alarms = createAlarmEvaluator();
    const changes = (points: Datapoint[]) =>
      alarms.period(points).filter((t) => t.alarm === 'GroupStatusErrAlarm');
    expect(changes(reconcilePoints('OK'))).toEqual([
      { alarm: 'GroupStatusErrAlarm', from: 'INSUFFICIENT_DATA', to: 'OK' },
    ]);
    expect(changes(reconcilePoints('WARN'))).toEqual([]);
    expect(changes(reconcilePoints('ERR'))).toEqual([
      { alarm: 'GroupStatusErrAlarm', from: 'OK', to: 'ALARM' },
    ]);
    expect(changes(reconcilePoints('ERR'))).toEqual([]);
    expect(changes([])).toEqual([]); // a period without a run keeps the state (ignore)
    expect(changes(reconcilePoints('OK'))).toEqual([
      { alarm: 'GroupStatusErrAlarm', from: 'ALARM', to: 'OK' },
    ]);
  });

  it('alarms on lost records and duplicates from the audit metrics', () => {
    const report = {
      topic: 'orders',
      complete: true,
      settled: { landed: 0, notWritten: 0 },
      scanned: 5,
      streams: [
        {
          stream: 'orders',
          pending: [],
          buckets: [{ lost: 2, duplicatesInLog: 1, redelivered: {} }],
        },
      ],
    } as unknown as AuditReport;
    const alarms = createAlarmEvaluator();
    const changes = alarms.period(emfDatapoints(emittedMetrics(() => publishAuditMetrics(report))));
    expect(changes).toEqual(
      expect.arrayContaining([
        { alarm: 'LostRecordsAlarm', from: 'INSUFFICIENT_DATA', to: 'ALARM' },
        { alarm: 'DuplicatesAlarm', from: 'INSUFFICIENT_DATA', to: 'ALARM' },
      ]),
    );
  });

  it("alarms on a function's Lambda errors, by its deployed name", () => {
    const alarms = createAlarmEvaluator();
    const errors = (fn: string, value: number): Datapoint => ({
      namespace: 'AWS/Lambda',
      metric: 'Errors',
      dimensions: { FunctionName: `kafka-tally-local-${fn}` },
      value,
    });
    alarms.period([errors('reconcile', 0)]);
    expect(alarms.state('ReconcileErrorsAlarm')).toBe('OK');
    expect(alarms.period([errors('reconcile', 1)])).toContainEqual({
      alarm: 'ReconcileErrorsAlarm',
      from: 'OK',
      to: 'ALARM',
    });
    expect(alarms.state('AuditErrorsAlarm')).toBe('OK'); // no datapoint: not breaching
  });
});
