import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createReportStore } from '../../functions/adapters/dynamodb/report-store.js';
import { localTablesForFile } from '../helpers/local-tables.js';
import { uniqueName } from '../helpers/unique-name.js';

// Reconcile reports on the local DynamoDB API (dynalite, which refuses items over 400 KB as
// DynamoDB does): a group whose report does not fit one item even gzipped is chunked across items
// and comes back whole; what it leaves behind goes with the report.

const AT = Date.parse('2026-03-01T00:00:00Z');
const DAY = 86_400_000;

/** A report of `n` partitions whose owners and client ids are random: gzip cannot shrink them. */
function bigReport(group: string, n: number, at: number) {
  return {
    group,
    at,
    state: 'Stable',
    status: 'WARN',
    partitionCount: n,
    partitions: Array.from({ length: n }, (_, i) => ({
      topic: `${'t'.repeat(200)}-${Math.floor(i / 1000)}`,
      partition: i % 1000,
      owner: randomBytes(60).toString('base64url'),
      clientId: randomBytes(60).toString('base64url'),
      status: 'LAGGING',
      lag: i,
    })),
  };
}

describe('reconcile report store on DynamoDB', () => {
  const { documents, table } = localTablesForFile('reports');
  const keysOf = async (group: string) => {
    const { Items = [] } = await documents.send(
      new QueryCommand({
        TableName: table('ReconcileReportsTable'),
        KeyConditionExpression: '#group = :group',
        ExpressionAttributeNames: { '#group': 'group' },
        ExpressionAttributeValues: { ':group': group },
        ConsistentRead: true,
      }),
    );
    return Items.map((item) => String(item.sk));
  };

  it('keeps a group report of 6,000 partitions (over 400 KB gzipped) across items, and takes them all away', async () => {
    const store = createReportStore(documents, table('ReconcileReportsTable'));
    const group = uniqueName('big');
    const report = bigReport(group, 6_000, AT);
    expect(gzipSync(JSON.stringify(report)).length).toBeGreaterThan(409_600);

    await store.saveGroupReports(AT, [{ group, report, dated: { body: report, digest: 'd1' } }]);
    expect(await store.latestGroupReport(group)).toEqual(report);
    expect(await store.groupReportsSince(group, AT - DAY)).toEqual([report]);
    const stored = await keysOf(group);
    expect(stored.filter((sk) => sk.startsWith('latest#')).length).toBeGreaterThan(2);

    // The next run's report replaces the latest; the list it replaced goes.
    const next = bigReport(group, 6_000, AT + 60_000);
    await store.saveGroupReport(group, AT + 60_000, next, next);
    expect(await store.latestGroupReport(group)).toEqual(next);
    expect(await store.groupReportsSince(group, AT - DAY)).toEqual([report, next]);
    const latestLists = (await keysOf(group)).filter((sk) => /^latest#[^#]+$/.test(sk));
    expect(latestLists).toEqual([`latest#${new Date(AT + 60_000).toISOString()}`]);

    // Pruning a dated report removes its chunks with it.
    let pruned = 0;
    while ((await store.groupReportsSince(group, AT - DAY)).length > 1)
      pruned += await store.pruneGroupReports(group, AT + 1, 10);
    expect(pruned).toBeGreaterThan(2);
    expect(
      (await keysOf(group)).filter((sk) => sk.startsWith(`report#${new Date(AT).toISOString()}`)),
    ).toEqual([]);

    // Forgetting the group leaves no chunk of its latest report.
    await store.forgetGroup(group, AT, AT + DAY);
    expect(await store.latestGroupReport(group)).toBeUndefined();
    expect((await keysOf(group)).filter((sk) => sk.startsWith('latest'))).toEqual([]);
  });

  it('keeps a report that shrank back to one item as one item, the chunked one gone at the next chunked save', async () => {
    const store = createReportStore(documents, table('ReconcileReportsTable'));
    const group = uniqueName('shrinks');
    await store.saveGroupReports(AT, [{ group, report: bigReport(group, 6_000, AT) }]);
    const small = bigReport(group, 10, AT + 60_000);
    await store.saveGroupReports(AT + 60_000, [{ group, report: small }]);
    expect(await store.latestGroupReport(group)).toEqual(small);
    const again = bigReport(group, 6_000, AT + 120_000);
    await store.saveGroupReports(AT + 120_000, [{ group, report: again }]);
    expect(await store.latestGroupReport(group)).toEqual(again);
    const lists = (await keysOf(group)).filter((sk) => /^latest#[^#]+$/.test(sk));
    expect(lists).toEqual([`latest#${new Date(AT + 120_000).toISOString()}`]);
  });
});
