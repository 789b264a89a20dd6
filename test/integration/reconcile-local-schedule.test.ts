import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { type DynamoDbProxy, startDynamoDbProxy } from '../helpers/dynamodb-proxy.js';

// `npm start`'s stack fires each schedule once per tick: one scheduler (infra/local/schedules.ts),
// not serverless-offline's as well. Counted by what every reconcile run does exactly once: one
// Scan of the offset history table, through a DynamoDB proxy only this stack's functions use
// (they read serverless.yml's local table names, so the stack keeps its default prefix).
describe('local schedules', () => {
  let stack: LocalStack;
  let proxy: DynamoDbProxy;
  const lines: string[] = [];

  beforeAll(async () => {
    proxy = await startDynamoDbProxy(inject('dynamodbEndpoint'));
    stack = await startLocalStack({
      env: { KAFKA_BROKERS: inject('kafkaBrokers'), DYNAMODB_ENDPOINT: proxy.endpoint },
      api: true,
      log: (line) => lines.push(line),
    });
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await proxy?.close();
  });

  it('runs reconcile once a minute, not twice, over two minutes', async () => {
    const table = stack.tables.OffsetHistoryTable;
    const scans = () =>
      proxy.calls.filter((c) => c.operation === 'Scan' && c.table === table).length;
    const before = scans();
    const started = Date.now();
    const ticks = () => lines.filter((l) => l.includes('schedule kafka-tally-local-reconcile'));
    // rate(1 minute) from the stack's start: two ticks within 125 s, each one run. Waits for the
    // second tick's answer (its run has scanned by then), not for the whole 125 s.
    while (ticks().length < 2 && Date.now() - started < 125_000)
      await new Promise((resolve) => setTimeout(resolve, 250));
    const fired = ticks();
    expect(fired.length, lines.join('\n')).toBeGreaterThanOrEqual(2);
    expect(scans() - before, `${fired.join('\n')} in ${Date.now() - started} ms`).toBe(
      fired.length,
    );
  }, 200_000);
});
