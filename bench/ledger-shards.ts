// Ledger writes on one stream: how many requests a second one stream gets when every DynamoDB
// partition key is held to 1,000 writes a second, before sharding (one key per stream,
// `shards: 1`) and after (`stream#shard`, LEDGER_SHARDS keys), side by side in one run.
//
// Each request is the ledger-first path's two writes (`open`, then `write` over its version: the
// fast path's one write is half of it), through functions/adapters/dynamodb/ledger.ts, by
// simulated containers (each its own ledger instance, so its own day mark), for --seconds. Every
// Put/Update goes through a token bucket per partition key (the item's `stream` attribute, which
// is also the byWriteTime index's key): 1,000 a second, no burst — a model of DynamoDB's
// per-partition write limit (1,000 WCU/s; a block under 1 KB is one WCU), as bench/seq-allocation.ts
// holds the counter item. Two tables behind it:
// - dynalite: the real local DynamoDB API (its own speed on this machine bounds the rate);
// - in-memory: a stand-in that answers every write at once, so the per-key limit alone bounds it
//   (it checks no condition: a model of capacity, not of the ledger's correctness).
// Columns: requests/s sustained, the busiest key's writes/s (held ≤ 1,000), keys written, and
// the rate the limit allows at the measured spread (1,000 × writes ÷ busiest key's ÷ 2).
//
//   npm run bench:ledger-shards [-- --seconds 5 --containers 64]
import { performance } from 'node:perf_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createLedger } from '../functions/adapters/dynamodb/ledger.js';
import { LEDGER_SHARDS } from '../functions/core/publish/ledger-layout.js';
import type { LedgerBlock } from '../functions/core/publish/ports.js';
import { Deadline } from '../functions/core/shared/deadline.js';
import {
  benchDynamoDb,
  flag,
  machineFacts,
  markdownTable,
  note,
  smokeOr,
  writeResults,
} from './harness.js';

const SECONDS = flag('seconds', smokeOr(5, 1)); // BENCH_SMOKE=1: 1 s, 8 containers
const CONTAINERS = flag('containers', smokeOr(64, 8));
/** Requests each container has in flight (Lambda: one per container; here, a few). */
const IN_FLIGHT = flag('in-flight', 8);
const KEY_WRITES_PER_SECOND = 1000;
const WRITES_PER_REQUEST = 2;

type Send = DynamoDBDocumentClient['send'];
interface Command {
  readonly constructor: { readonly name: string };
  readonly input: { Item?: { stream?: unknown }; Key?: { stream?: unknown } };
}

/** `inner` with each partition key's writes held to `perSecond`, counted per key. */
function keyLimited(inner: Pick<DynamoDBDocumentClient, 'send'>, perSecond: number) {
  const nextFree = new Map<string, number>();
  const writes = new Map<string, number>();
  const send = async (command: Command, options?: unknown) => {
    const name = command.constructor.name;
    const key = command.input.Item?.stream ?? command.input.Key?.stream;
    if ((name === 'PutCommand' || name === 'UpdateCommand') && typeof key === 'string') {
      const now = performance.now();
      const at = Math.max(now, nextFree.get(key) ?? now);
      nextFree.set(key, at + 1000 / perSecond);
      writes.set(key, (writes.get(key) ?? 0) + 1);
      if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
    }
    return (inner.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
  };
  return { client: { send } as unknown as DynamoDBDocumentClient, writes };
}

/** Answers every call at once, as a table with no limit but the one in front of it. */
const inMemory = { send: (async () => ({})) as unknown as Send };

async function run(
  backend: Pick<DynamoDBDocumentClient, 'send'>,
  backendName: string,
  table: string,
  shards: number,
) {
  const { client, writes } = keyLimited(backend, KEY_WRITES_PER_SECOND);
  const stream = `bench-${backendName}-${shards}-${Date.now()}`;
  let nextSeq = 0;
  let requests = 0;
  const started = performance.now();
  const until = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONTAINERS }, async () => {
      const ledger = createLedger(client, table, { shards });
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (performance.now() < until) {
            const firstSeq = ++nextSeq;
            const block: LedgerBlock = {
              stream,
              firstSeq,
              topic: 'bench-topic',
              session: 'bench',
              idempotencyKey: undefined,
              outcomes: [{ status: 'UNKNOWN', message: 'sending' }],
            };
            const deadline = new Deadline(Date.now() + 30_000);
            const opened = await ledger.open(block, deadline);
            if (opened === 'voided') throw new Error(`seq ${firstSeq} was voided`);
            const acked = { ...block, outcomes: [{ status: 'ACKED', partition: 0, offset: '0' }] };
            await ledger.write(acked as LedgerBlock, deadline, opened.version);
            requests++;
          }
        }),
      );
    }),
  );
  const took = (performance.now() - started) / 1000;
  const counts = [...writes.values()];
  const total = counts.reduce((a, b) => a + b, 0);
  const busiest = Math.max(...counts);
  return {
    table: backendName,
    layout: shards === 1 ? 'one key per stream (before)' : `${shards} shards (after)`,
    requestsPerSecond: Math.round(requests / took),
    writesPerSecond: Math.round(total / took),
    busiestKeyWritesPerSecond: Math.round(busiest / took),
    keysWritten: writes.size,
    /** What the per-key limit allows at the measured spread of writes over keys. */
    limitAllowsRequestsPerSecond: Math.round(
      (KEY_WRITES_PER_SECOND * total) / busiest / WRITES_PER_REQUEST,
    ),
  };
}

const dynamoDb = await benchDynamoDb('bench-ledger-');
try {
  const tables = dynamoDb.tables;
  const ledgerTable = tables.LedgerTable as string;
  const documents = dynamoDb.documents;
  const results = [];
  for (const [backend, name] of [
    [documents, 'dynalite'],
    [inMemory, 'in-memory'],
  ] as const) {
    for (const shards of [1, LEDGER_SHARDS]) {
      note(`${CONTAINERS} containers × ${IN_FLIGHT} in flight, ${shards} shard(s), ${name}…`);
      results.push(await run(backend, name, ledgerTable, shards));
    }
  }
  const summary = {
    at: new Date().toISOString(),
    machine: machineFacts(),
    seconds: SECONDS,
    containers: CONTAINERS,
    inFlight: IN_FLIGHT,
    keyWritesPerSecond: KEY_WRITES_PER_SECOND,
    note: 'one-record requests, open + write (2 writes) each; every partition key held to 1,000 writes/s',
    results,
  };
  const table = markdownTable(
    [
      'table',
      'ledger keys',
      'requests/s',
      'writes/s',
      'busiest key writes/s',
      'keys written',
      'limit allows req/s',
    ],
    results.map((r) => [
      r.table,
      r.layout,
      String(r.requestsPerSecond),
      String(r.writesPerSecond),
      String(r.busiestKeyWritesPerSecond),
      String(r.keysWritten),
      String(r.limitAllowsRequestsPerSecond),
    ]),
  );
  writeResults('ledger-shards', summary, table, true);
} finally {
  await dynamoDb.stop();
}
