import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createMappingStore } from '../../functions/adapters/dynamodb/mapping-store.js';
import { createOffsetHistory } from '../../functions/adapters/dynamodb/offset-history.js';
import { createReportStore } from '../../functions/adapters/dynamodb/report-store.js';
import { createReconciler } from '../../functions/core/reconcile/reconciler.js';
import { FakeCluster } from '../helpers/fake-cluster.js';
import { localTablesForFile } from '../helpers/local-tables.js';

// Two overlapping reconcile runs on the real offset-history adapter and the local DynamoDB API
// (the groups come from a fake cluster: what is tested is the conditional write). Neither run's
// history write reaches DynamoDB before both have read the history, so both write over the same
// version: the write's condition alone decides, and the loser counts it in historyConflicts.

const MINUTE = 60_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');

describe('two reconcile runs at once on DynamoDB', () => {
  const { documents, table } = localTablesForFile('history-race');
  /** Held history writes wait for this; resolved once `scansToWait` history scans answered. */
  let barrier: { scansToWait: number; open: () => void; opened: Promise<void> } | undefined;
  documents.middlewareStack.add(
    (next, context) => async (args) => {
      const gate = barrier; // the stack is the base client's too: it creates the tables
      if (gate === undefined) return next(args);
      const name = String(context.commandName);
      const history =
        (args.input as { TableName?: string }).TableName === table('OffsetHistoryTable');
      if (history && name === 'PutItemCommand') await gate.opened;
      const result = await next(args);
      if (history && name === 'ScanCommand' && --gate.scansToWait === 0) gate.open();
      return result;
    },
    { step: 'initialize', name: 'holdHistoryWrites' },
  );

  it('lets one write a group history item and the other count a conflict; no false finding', async () => {
    const cluster = new FakeCluster();
    cluster.topics.set('t', [{ logStart: 0, logEnd: 3 }]);
    cluster.groups.set('g0', { state: 'Empty', members: [], commits: new Map([['t#0', 2]]) });
    const history = createOffsetHistory(documents, table('OffsetHistoryTable'));
    const make = (at: number) =>
      createReconciler(
        {
          source: cluster.source(() => at),
          history,
          mappings: createMappingStore(documents, table('MappingsTable')),
          reports: createReportStore(documents, table('ReconcileReportsTable')),
        },
        { windowSize: 10, graceMs: 0, retentionMs: 14 * 1440 * MINUTE, pruneBudget: 100 },
      );
    const stored = async () =>
      (
        await documents.send(
          new GetCommand({
            TableName: table('OffsetHistoryTable'),
            Key: { group: 'g0', partition: 't#w0' },
            ConsistentRead: true,
          }),
        )
      ).Item;
    expect((await make(T0).run()).historyConflicts).toBe(0);
    expect((await stored())?.version).toBe(1);

    cluster.groups.get('g0')?.commits.set('t#0', 3); // both runs have a move to write
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    barrier = { scansToWait: 2, open, opened };
    const [a, b] = await Promise.all([make(T0 + MINUTE).run(), make(T0 + 2 * MINUTE).run()]);
    barrier = undefined;
    expect([a.historyConflicts, b.historyConflicts].sort()).toEqual([0, 1]);
    expect((await stored())?.version).toBe(2); // one write landed over version 1, not two

    for (const report of [a, b, await make(T0 + 3 * MINUTE).run()]) {
      expect(report.groups[0]?.partitions[0]).toMatchObject({ committed: 3 });
      expect(['REWIND', 'LOST']).not.toContain(report.groups[0]?.partitions[0]?.status);
    }
    expect((await stored())?.version).toBe(2); // nothing moved since: nothing written
  });
});
