import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { createLedger } from '../../functions/adapters/dynamodb/ledger.js';
import { createKeyedPublishes } from '../../functions/adapters/dynamodb/reservations.js';
import {
  createSequenceAllocator,
  createStreamCounter,
} from '../../functions/adapters/dynamodb/sequence-allocator.js';
import { SeqFates } from '../../functions/core/audit/seq-fates.js';
import { DAY_MS, ledgerShardKey } from '../../functions/core/publish/ledger-layout.js';
import type { LedgerBlock } from '../../functions/core/publish/ports.js';
import { Deadline } from '../../functions/core/shared/deadline.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import { createTtlSweeper } from '../../infra/local/ttl-sweeper.js';
import { httpEvent } from '../helpers/http-event.js';
import { usePublishApi } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// The ledger's retention on the local DynamoDB API: a stream written every day for 100 days on
// an injected clock that ends now, the local TTL sweeper run after each day; then the lookup
// route (on the real clock) and the audit's hole judge read what is left.

const RETENTION_DAYS = 30;
const DAYS = 100;
const PER_DAY = 2;
const ctx = usePublishApi('ledger-retention', {
  TALLY_LEDGER_RETENTION_DAYS: String(RETENTION_DAYS),
});

function tables() {
  const env = process.env;
  return {
    ledger: env.TALLY_LEDGER_TABLE as string,
    streams: env.TALLY_STREAMS_TABLE as string,
    reservations: env.TALLY_RESERVATIONS_TABLE as string,
  };
}

const ack = (offset: number) =>
  ({ status: 'ACKED', partition: 0, offset: String(offset) }) as const;

function block(stream: string, firstSeq: number, count = 1, key?: string): LedgerBlock {
  return {
    stream,
    firstSeq,
    topic: stream,
    session: 'session-1',
    idempotencyKey: key,
    outcomes: Array.from({ length: count }, (_, i) => ack(firstSeq + i)),
  };
}

async function lookup(query: Record<string, string>) {
  const response = await ctx.api.lookup(
    httpEvent({ pathParameters: { cluster_id: inject('kafkaClusterId') }, query }),
  );
  return { status: response.statusCode, body: JSON.parse(response.body) };
}

/** The ledger items of `stream` (blocks of every key, and day marks), by kind. */
async function itemsOf(client: ReturnType<typeof localDynamoDbClient>, stream: string) {
  let blocks = 0;
  let marks = 0;
  let start: Record<string, never> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: tables().ledger, ExclusiveStartKey: start }),
    );
    for (const item of page.Items ?? []) {
      const key = item.stream?.S ?? '';
      if (key === `${stream}#days`) marks++;
      else if (key === stream || key.startsWith(`${stream}#`)) blocks++;
    }
    start = page.LastEvaluatedKey as typeof start;
  } while (start);
  return { blocks, marks };
}

describe('ledger retention', () => {
  it(`keeps ${RETENTION_DAYS} days over ${DAYS}: expiry by TTL, 410 with the day, the audit's holes unchanged`, async () => {
    const client = localDynamoDbClient(inject('dynamodbEndpoint'));
    const documents = DynamoDBDocumentClient.from(client);
    const stream = uniqueName('kept');
    // On a whole second: an expiry (TTL seconds, rounded up) then falls exactly on its day's
    // sweep, never up to a second after it (which left 2 blocks of 62 unswept on some runs).
    const start = Math.floor((Date.now() - DAYS * DAY_MS) / 1000) * 1000;
    let clock = start;
    const ledger = createLedger(documents, tables().ledger, {
      retentionMs: RETENTION_DAYS * DAY_MS,
      now: () => clock,
    });
    const sweeper = createTtlSweeper({
      client,
      tables: { LedgerTable: tables().ledger },
      offsetMs: start - Date.now(),
    });
    let seq = 0;
    const hole = (DAYS - 5) * PER_DAY + 1; // allocated on day 95, never recorded
    let deleted = 0;
    let mostBlocks = 0;
    for (let day = 0; day < DAYS; day++) {
      clock = start + day * DAY_MS;
      for (let i = 0; i < PER_DAY; i++) {
        seq++;
        if (seq !== hole) await ledger.write(block(stream, seq));
      }
      deleted += await sweeper.sweep();
      sweeper.advance(DAY_MS);
      const kept = await itemsOf(client, stream);
      // The bound: a block lives its write day plus the retention; one day mark per day.
      expect(kept.blocks).toBeLessThanOrEqual(PER_DAY * (RETENTION_DAYS + 1));
      expect(kept.marks).toBe(day + 1);
      mostBlocks = Math.max(mostBlocks, kept.blocks);
    }
    expect(mostBlocks).toBe(PER_DAY * RETENTION_DAYS);
    expect(deleted).toBe((DAYS - RETENTION_DAYS) * PER_DAY);
    clock = Date.now();
    await createSequenceAllocator(documents, tables().streams).allocate(
      stream,
      seq,
      stream,
      new Deadline(Date.now() + 10_000),
    );

    // The lookup route, on the real clock: expired (410, its day), kept (200), never (404).
    const expiredDay = new Date((Math.floor(start / DAY_MS) + RETENTION_DAYS) * DAY_MS)
      .toISOString()
      .slice(0, 10);
    const gone = await lookup({ stream, seq: '1' });
    expect(gone.status).toBe(410);
    expect(gone.body.message).toContain(`expired on ${expiredDay}`);
    expect(gone.body.message).toContain('TALLY_LEDGER_RETENTION_DAYS');
    const lastKept = await lookup({ stream, seq: String(seq) });
    expect(lastKept.status).toBe(200);
    expect(lastKept.body.records[0]).toMatchObject({ seq, outcome: 'ACKED' });
    expect((await lookup({ stream, seq: String(hole) })).status).toBe(404);
    const never = await lookup({ stream, seq: String(seq + 1) });
    expect(never.status).toBe(404);
    expect(never.body.message).toContain('was never allocated');

    // By Idempotency-Key: one read of the block's shard; past the retention, 410 as well.
    const keyed = createKeyedPublishes(documents, tables().reservations, 86_400);
    for (const [idempotencyKey, firstSeq] of [
      [`${stream}-old`, 3],
      [`${stream}-new`, seq],
      [`${stream}-hole`, hole],
    ] as const) {
      await keyed.claim(
        {
          idempotencyKey,
          fingerprint: 'f',
          stream,
          topic: stream,
          firstSeq,
          count: 1,
          timestamp: 0,
          lockedUntil: 0,
        },
        new Deadline(Date.now() + 10_000),
      );
    }
    expect((await lookup({ idempotency_key: `${stream}-old` })).status).toBe(410);
    expect((await lookup({ idempotency_key: `${stream}-new` })).body.records[0]).toMatchObject({
      seq,
      outcome: 'ACKED',
    });
    // A key whose seqs have no block (a fast-path outcome write lost): 404 naming its seqs, not
    // "no record was published".
    const unrecordedKey = await lookup({ idempotency_key: `${stream}-hole` });
    expect(unrecordedKey.status).toBe(404);
    expect(unrecordedKey.body.message).toContain(`took seqs ${hole}..${hole} of stream ${stream}`);
    expect(unrecordedKey.body.message).toContain('no ledger record yet');

    // The audit's full read of the ledger: the expired seqs are not holes; the real one is.
    const horizonAt = Date.now() + 1000;
    const fates = new SeqFates(horizonAt);
    await ledger.forEachBlock(stream, (b) => fates.addBlock({ ...b, writtenAt: 0 }));
    const counter = createStreamCounter(documents, tables().streams);
    const figures = await fates.settle({ counter, ledger }, stream, [stream], {
      complete: true,
      seen: () => false,
    });
    expect(figures.get(stream)).toMatchObject({ allocated: seq, voidedNow: 1, unrecorded: [] });
    expect((await ledger.find(stream, hole))?.outcomes[0]?.status).toBe('VOID');
    client.destroy();
  });

  it('reads a ledger written before sharding beside the new layout, and settles it in place', async () => {
    const client = localDynamoDbClient(inject('dynamodbEndpoint'));
    const documents = DynamoDBDocumentClient.from(client);
    const stream = uniqueName('legacy');
    const ledger = createLedger(documents, tables().ledger, {
      retentionMs: RETENTION_DAYS * DAY_MS,
    });
    // Two blocks as the ledger wrote them before: keyed by the stream, no TTL, one unversioned.
    const now = new Date().toISOString();
    const legacyItem = (seq: number, count: number, extra: Record<string, unknown>) =>
      documents.send(
        new PutCommand({
          TableName: tables().ledger,
          Item: {
            stream,
            seq,
            count,
            lastSeq: seq + count - 1,
            topic: stream,
            session: 'old',
            outcomes: JSON.stringify(Array.from({ length: count }, () => ['U', 'no answer'])),
            updatedAt: now,
            ...extra,
          },
        }),
      );
    await legacyItem(1, 3, { version: 'v1' });
    await legacyItem(4, 2, {});
    await ledger.write(block(stream, 6, 5));
    await createSequenceAllocator(documents, tables().streams).allocate(
      stream,
      10,
      stream,
      new Deadline(Date.now() + 10_000),
    );

    // Any seq, found in either layout: inside a legacy block and inside a sharded one.
    expect((await lookup({ stream, seq: '2' })).body.records[0]).toMatchObject({
      seq: 2,
      outcome: 'UNKNOWN',
    });
    expect((await lookup({ stream, seq: '9' })).body.records[0]).toMatchObject({
      seq: 9,
      outcome: 'ACKED',
    });
    const old = await ledger.find(stream, 1);
    expect(old?.version).toBe('legacy:v1');

    // The audit settles a legacy block where it is, over the version it read.
    const settled = await ledger.write(
      { ...(old as LedgerBlock), outcomes: [ack(1), ack(2), ack(3)] },
      undefined,
      old?.version,
    );
    expect(settled).toMatch(/^legacy:/);
    expect(await ledger.write(block(stream, 1, 3), undefined, 'legacy:v1')).toBeUndefined();
    // A retry reopening a legacy block writes the new layout, which reads prefer.
    await ledger.open(
      { ...block(stream, 4, 2), outcomes: [ack(4), ack(5)] },
      new Deadline(Date.now() + 5000),
    );
    expect((await ledger.find(stream, 5))?.outcomes[1]).toEqual(ack(5));
    const order: number[] = [];
    await ledger.forEachBlock(stream, (b) => order.push(b.firstSeq));
    expect(order.slice(0, 2).sort()).toEqual([1, 4]);
    expect(order.slice(2).sort((a, b) => a - b)).toEqual([4, 6]);
    const changed: number[] = [];
    await ledger.forEachChangedBlock?.(stream, 0, (b) => changed.push(b.firstSeq));
    expect(changed.sort((a, b) => a - b)).toEqual([1, 4, 4, 6]);
    expect(await itemsOf(client, stream)).toEqual({ blocks: 4, marks: 1 });
    // The new block is under its shard's key, with its TTL.
    const { Item: sharded } = await documents.send(
      new GetCommand({
        TableName: tables().ledger,
        Key: { stream: ledgerShardKey(stream, 6), seq: 6 },
      }),
    );
    expect(sharded?.expiresAt).toBeGreaterThan(Date.now() / 1000 + (RETENTION_DAYS - 1) * 86_400);

    // Every seq has its fate across both layouts: no hole to judge.
    const fates = new SeqFates(Date.now() + 1000);
    await ledger.forEachBlock(stream, (b) => fates.addBlock(b));
    const figures = await fates.settle(
      { counter: createStreamCounter(documents, tables().streams), ledger },
      stream,
      [stream],
      { complete: true, seen: () => false },
    );
    expect(figures.get(stream)).toMatchObject({ allocated: 10, voidedNow: 0, unrecorded: [] });
    client.destroy();
  });
});
