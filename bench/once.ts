// `npm run bench:once`: what the once guard costs per record, beside the same handler without
// it, in the same run on the local stack's DynamoDB API (dynalite): batches of 100 records on 4
// partitions with Tally headers, the handler's own work a JSON parse. Three columns per round:
// no guard; the guard on new seqs (claim + done-mark per record, one read and one compaction
// read per batch); the guard on a batch delivered again (every record suppressed). Rounds
// alternate so load on the machine falls on all columns alike. Prints JSON (harness.ts writeResults).
import { performance } from 'node:perf_hooks';
import middy from '@middy/core';
import type { MSKEvent, MSKRecord } from 'aws-lambda';
import { createDynamoDbClients } from '../functions/adapters/dynamodb/client.js';
import { createOnceStore } from '../functions/adapters/dynamodb/once-store.js';
import { eachRecord, type MskBatchResponse, tallyOnce } from '../functions/consumer/tally-once.js';
import { benchStack, machineFacts, note, smokeOr, writeResults } from './harness.js';

const BATCH = 100;
const PARTITIONS = 4;
const ROUNDS = Number(process.env.BENCH_ONCE_ROUNDS ?? smokeOr(10, 1)); // BENCH_SMOKE=1: 1

const bytes = (text: string) => [...Buffer.from(text)];
function batch(stream: string, firstSeq: number): MSKEvent {
  const records: Record<string, MSKRecord[]> = {};
  for (let i = 0; i < BATCH; i++) {
    const partition = i % PARTITIONS;
    const list = records[`bench-${partition}`] ?? [];
    list.push({
      topic: 'bench',
      partition,
      offset: firstSeq + i,
      timestamp: 0,
      timestampType: 'CREATE_TIME',
      key: '',
      value: Buffer.from(JSON.stringify({ order: firstSeq + i, amount: 12.5 })).toString('base64'),
      headers: [{ 'tally.stream': bytes(stream) }, { 'tally.seq': bytes(String(firstSeq + i)) }],
    });
    records[`bench-${partition}`] = list;
  }
  return { eventSource: 'aws:kafka', eventSourceArn: 'arn', bootstrapServers: '', records };
}

const work = async (record: MSKRecord) => {
  JSON.parse(Buffer.from(record.value, 'base64').toString('utf8'));
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;

const bench = await benchStack('tally-bench-once-');
try {
  const { stack } = bench;
  const clients = createDynamoDbClients({
    endpoint: stack.dynamodbEndpoint,
    region: 'us-east-1',
    timeoutMs: 5000,
  });
  const store = createOnceStore(clients.documents, stack.tables.OnceTable as string);
  const plain = middy<MSKEvent, { processed: number }>().handler(async (event) => {
    const list = Object.values(event.records).flat();
    for (const record of list) await work(record);
    return { processed: list.length };
  });
  const guarded = middy<MSKEvent, MskBatchResponse>()
    .use(tallyOnce({ group: `bench-${Date.now()}`, store }))
    .handler(eachRecord(work));
  const context = {} as never;
  const columns = {
    unguarded: [] as number[],
    guardedNew: [] as number[],
    suppressed: [] as number[],
  };
  const time = async (column: number[], run: () => Promise<unknown>) => {
    const started = performance.now();
    await run();
    column.push(((performance.now() - started) * 1000) / BATCH);
  };
  // One warm-up of each path (SDK connections, module caches).
  await plain(batch('warm', 1), context);
  await guarded(batch('warm', 1), context);
  for (let round = 0; round < ROUNDS; round++) {
    const event = batch('orders', 1 + round * BATCH);
    await time(columns.unguarded, () => plain(event, context));
    await time(columns.guardedNew, () => guarded(event, context));
    await time(columns.suppressed, () => guarded(event, context));
  }
  const result = {
    recordsPerBatch: BATCH,
    partitions: PARTITIONS,
    rounds: ROUNDS,
    perRecordMicros: {
      unguarded: Math.round(median(columns.unguarded)),
      guardedNewSeqs: Math.round(median(columns.guardedNew)),
      guardedRedelivered: Math.round(median(columns.suppressed)),
    },
    overheadPerRecordMicros: Math.round(median(columns.guardedNew) - median(columns.unguarded)),
    machine: machineFacts(),
  };
  const { unguarded, guardedNewSeqs, guardedRedelivered } = result.perRecordMicros;
  const table = [
    '| handler | µs per record (median batch) |',
    '|---|---:|',
    `| no guard | ${unguarded} |`,
    `| tallyOnce, new seqs | ${guardedNewSeqs} |`,
    `| tallyOnce, redelivered (suppressed) | ${guardedRedelivered} |`,
  ].join('\n');
  note(
    `per record (median of ${ROUNDS} batches of ${BATCH}): no guard ${result.perRecordMicros.unguarded} µs · guard, new ${result.perRecordMicros.guardedNewSeqs} µs · guard, redelivered ${result.perRecordMicros.guardedRedelivered} µs`,
  );
  // Not saved in bench/results (as before): bench/run.ts collects it.
  writeResults('once', { ...result, at: new Date().toISOString() }, table, false);
} finally {
  await bench.stop();
}
