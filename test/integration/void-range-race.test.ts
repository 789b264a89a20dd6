import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLedger } from '../../functions/adapters/dynamodb/ledger.js';
import type { LedgerBlock } from '../../functions/core/publish/ports.js';
import { Deadline } from '../../functions/core/shared/deadline.js';
import type { DynamoDbCall, DynamoDbProxy } from '../helpers/dynamodb-proxy.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { lookupSeq, startProxiedPublish } from '../helpers/proxied-publish.js';
import type { loadHandlers } from '../helpers/publish-client.js';
import { expectOneFateEach } from '../helpers/seq-fates.js';

// Issue 31: an audit stopped between a VOID range's write and its look for blocks inside it,
// while a publisher's block landed under the range in those milliseconds. The range is left
// pending: a lookup under it does not answer VOID, and the next audit checks it, so every seq
// keeps one fate (before the repair: seqs 5 and 6 both VOID and ACKED, for ever).
describe('a VOID range whose audit stopped before checking it', () => {
  let proxy: DynamoDbProxy;
  let topic: string;
  let env: Record<string, string>;
  let api: Awaited<ReturnType<typeof loadHandlers>>;
  const clusterId = () => inject('kafkaClusterId');
  const direct = () =>
    new DynamoDBClient({
      endpoint: inject('dynamodbEndpoint'),
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  const auditNow = async () => {
    const { handler } = await import('../../functions/audit/http-handler.js');
    return handler(
      httpEvent({ pathParameters: { cluster_id: clusterId() }, body: JSON.stringify({ topic }) }),
      lambdaContext(),
    );
  };
  const lookup = (seq: number) => lookupSeq(api, clusterId(), topic, seq);
  const ledgerCall = (operation: string) => (call: DynamoDbCall) =>
    call.operation === operation && call.table === env.TALLY_LEDGER_TABLE;
  const isRangeWrite = (call: DynamoDbCall) => {
    const item = call.input.Item as { stream?: { S?: string } } | undefined;
    return ledgerCall('PutItem')(call) && item?.stream?.S === `${topic}#void`;
  };

  beforeAll(async () => {
    ({ proxy, env, topic, api } = await startProxiedPublish(
      inject('dynamodbEndpoint'),
      'void-race',
      10000,
    ));
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it('leaves one fate per seq after the next audit, and no final VOID under the pending range', async () => {
    const produced = await api.produce(
      httpEvent({
        pathParameters: { cluster_id: clusterId(), topic_name: topic },
        body: JSON.stringify({ value: { type: 'STRING', data: 'v' } }),
      }),
    );
    expect(produced.statusCode, produced.body).toBe(200);
    const first = await auditNow();
    expect(first.statusCode, first.body).toBe(200);

    // Seqs 2..11 allocated and never written: a hole the next audit voids as one range.
    const dynamo = direct();
    await dynamo.send(
      new UpdateItemCommand({
        TableName: env.TALLY_STREAMS_TABLE,
        Key: { stream: { S: topic } },
        UpdateExpression: 'ADD lastSeq :ten',
        ExpressionAttributeValues: { ':ten': { N: '10' } },
      }),
    );
    const ledger = createLedger(
      DynamoDBDocumentClient.from(dynamo),
      String(env.TALLY_LEDGER_TABLE),
    );

    // When the audit's range write arrives, a publisher (a keyed retry of seqs 5..6) opens its
    // block, finds no range yet, sends and records ACKED; then the range lands over it, and the
    // audit dies at its next ledger read: the look for blocks inside the range.
    let killing = false;
    let arrive = () => {};
    const arrived = new Promise<void>((resolve) => {
      arrive = resolve;
    });
    let seen = 0;
    const landed = arrived.then(async () => {
      const block: LedgerBlock = {
        stream: topic,
        firstSeq: 5,
        topic,
        session: 'late-retry',
        idempotencyKey: undefined,
        outcomes: [5, 6].map(() => ({ status: 'UNKNOWN', message: 'opened' }) as const),
      };
      const opened = await ledger.open(block, new Deadline(Date.now() + 10_000));
      if (opened === 'voided') throw new Error('the range was there before the block');
      const producer = testKafka('void-race-late').producer({ idempotent: true });
      await producer.connect();
      const [meta] = await producer.send({
        topic,
        acks: -1,
        messages: [5, 6].map((seq) => ({
          value: 'late',
          headers: { 'tally.stream': topic, 'tally.seq': String(seq), 'tally.session': 'late' },
        })),
      });
      await producer.disconnect();
      const base = BigInt(String(meta?.baseOffset));
      const acked = await ledger.write(
        {
          ...block,
          outcomes: [0, 1].map((i) => ({
            status: 'ACKED' as const,
            partition: Number(meta?.partition),
            offset: String(base + BigInt(i)),
          })),
        },
        undefined,
        opened.version,
      );
      expect(acked).toBeDefined();
      killing = true;
    });
    proxy.holdUntil((call) => {
      if (!isRangeWrite(call) || ++seen > 1) return false;
      arrive();
      return true;
    }, landed);
    proxy.inject('fail', (call) => killing && ledgerCall('Query')(call), 1000);

    const killed = await auditNow();
    killing = false;
    await landed;
    expect(killed.statusCode, killed.body).toBe(503);
    expect(seen, 'the audit wrote a VOID range').toBeGreaterThan(0);

    // Under the pending range the lookup gives no final VOID; the block's seqs are its own.
    const under = await lookup(3);
    expect(under.status).toBe(200);
    expect(under.body.records[0].outcome).not.toBe('VOID');
    expect((await lookup(5)).body.records[0].outcome).toBe('ACKED');

    const next = await auditNow();
    expect(next.statusCode, next.body).toBe(200);
    expect(await expectOneFateEach(inject('dynamodbEndpoint'), topic)).toEqual([
      'ACKED',
      'VOID',
      'VOID',
      'VOID',
      'ACKED',
      'ACKED',
      'VOID',
      'VOID',
      'VOID',
      'VOID',
      'VOID',
    ]);
    expect((await lookup(3)).body.records[0]).toMatchObject({ outcome: 'VOID' });
    dynamo.destroy();
  });
});
