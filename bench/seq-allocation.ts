// Seq allocation on one stream: how many seqs a second one stream gets, with the stream's counter
// item alone (every request one conditional update, as with TALLY_SEQ_LEASE_MAX=0) and with seq
// leases per container (the default, 100, and the most, 1,000), side by side in one run.
//
// Each case runs CONTAINERS simulated containers (each its own allocator and lease state, as
// Lambda containers have), each sending one-record requests back to back for --seconds, against
// the local DynamoDB API (dynalite, started here or DYNAMODB_ENDPOINT). Two columns per case:
// - local: as fast as dynalite on this machine answers (its limit, not DynamoDB's);
// - AWS-shaped: the same, with the counter item held to 1,000 updates a second (a DynamoDB
//   partition's write limit, 1,000 WCU/s, which one item cannot exceed; each allocation is one
//   WCU) by a token bucket in front of it — a model of that one limit, not a measurement of AWS.
// Every seq handed out is checked unique; seqs allocated and never handed out (the rest of the
// last leases, VOID to the audit) are counted.
//
//   npm run bench:seq-allocation [-- --seconds 8 --containers 16]
import { performance } from 'node:perf_hooks';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { createSequenceAllocator } from '../functions/adapters/dynamodb/sequence-allocator.js';
import type { SequenceAllocator } from '../functions/core/publish/ports.js';
import { createSeqLeases } from '../functions/core/publish/seq-leases.js';
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

const SECONDS = flag('seconds', smokeOr(8, 1)); // BENCH_SMOKE=1: 1 s, 2 containers
const CONTAINERS = flag('containers', smokeOr(16, 2));
/** DynamoDB's write limit of one partition, hence of one item: 1,000 WCU a second. */
const ITEM_WRITES_PER_SECOND = 1000;
const HORIZON_MS = 15 * 60_000;

/** Holds `inner`'s calls to `perSecond`, as a partition's write capacity holds one item's. */
function itemLimited(inner: SequenceAllocator, perSecond: number): SequenceAllocator {
  let nextFree = performance.now();
  return {
    async allocate(stream, count, topic, deadline) {
      const at = Math.max(performance.now(), nextFree);
      nextFree = at + 1000 / perSecond;
      const wait = at - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      return inner.allocate(stream, count, topic, deadline);
    },
  };
}

async function run(
  documents: DynamoDBDocumentClient,
  table: string,
  stream: string,
  maxLease: number,
  limited: boolean,
  seconds = SECONDS,
) {
  let updates = 0;
  const counter: SequenceAllocator = createSequenceAllocator(documents, table);
  const counted: SequenceAllocator = {
    allocate(...args) {
      updates++;
      return counter.allocate(...args);
    },
  };
  const inner = limited ? itemLimited(counted, ITEM_WRITES_PER_SECOND) : counted;
  const seen = new Set<number>();
  let duplicates = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  // Seqs handed out in the run's second half: the rate once every container's lease has grown.
  const half = started + (seconds * 1000) / 2;
  let secondHalf = 0;
  await Promise.all(
    Array.from({ length: CONTAINERS }, async () => {
      const allocator =
        maxLease === 0
          ? inner
          : createSeqLeases(inner, { horizonMs: HORIZON_MS, maxLease, windowMs: 1000 });
      while (performance.now() < until) {
        const t = performance.now();
        const { firstSeq } = await allocator.allocate(
          stream,
          1,
          'bench-topic',
          new Deadline(Date.now() + 10_000),
        );
        latencies.push(performance.now() - t);
        if (t >= half) secondHalf++;
        if (seen.has(firstSeq)) duplicates++;
        seen.add(firstSeq);
      }
    }),
  );
  const took = (performance.now() - started) / 1000;
  const { Item } = await documents.send(new GetCommand({ TableName: table, Key: { stream } }));
  const lastSeq = Number(Item?.lastSeq ?? 0);
  latencies.sort((a, b) => a - b);
  const percentile = (q: number) =>
    Math.round(
      (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 10,
    ) / 10;
  return {
    maxLease,
    counterItem: limited ? `${ITEM_WRITES_PER_SECOND} updates/s (modelled)` : 'dynalite',
    seqsPerSecond: Math.round(seen.size / took),
    secondHalfSeqsPerSecond: Math.round(secondHalf / (took - seconds / 2)),
    counterUpdatesPerSecond: Math.round(updates / took),
    seqsPerUpdate: Math.round((seen.size / Math.max(1, updates)) * 10) / 10,
    p50Ms: percentile(0.5),
    p99Ms: percentile(0.99),
    handedOut: seen.size,
    duplicates,
    /** Allocated on the counter, never handed out: the audit records them VOID. */
    unused: lastSeq - seen.size,
  };
}

const dynamoDb = await benchDynamoDb('bench-seq-');
try {
  const tables = dynamoDb.tables;
  const streams = tables.StreamsTable as string;
  const documents = dynamoDb.documents;
  // Warm-up (connections, dynalite's JIT), not counted.
  await run(documents, streams, `bench-warm-up-${Date.now()}`, 0, false, 2);
  const results = [];
  for (const limited of [false, true]) {
    for (const maxLease of [0, 100, 1000]) {
      const stream = `bench-${limited ? 'aws' : 'local'}-${maxLease}-${Date.now()}`;
      note(`${CONTAINERS} containers, lease ${maxLease}, ${limited ? 'AWS-shaped' : 'local'}…`);
      results.push(await run(documents, streams, stream, maxLease, limited));
    }
  }
  const summary = {
    at: new Date().toISOString(),
    machine: machineFacts(),
    seconds: SECONDS,
    containers: CONTAINERS,
    note: 'one-record requests back to back; maxLease 0 is the counter alone (before leases)',
    results,
  };
  const table = markdownTable(
    [
      'counter item',
      'lease max',
      'seqs/s',
      'seqs/s, 2nd half',
      'counter updates/s',
      'seqs/update',
      'p50 ms',
      'p99 ms',
      'unused (VOID)',
      'dupes',
    ],
    results.map((r) => [
      r.counterItem,
      String(r.maxLease),
      String(r.seqsPerSecond),
      String(r.secondHalfSeqsPerSecond),
      String(r.counterUpdatesPerSecond),
      String(r.seqsPerUpdate),
      String(r.p50Ms),
      String(r.p99Ms),
      String(r.unused),
      String(r.duplicates),
    ]),
  );
  writeResults('seq-allocation', summary, table, true);
} finally {
  await dynamoDb.stop();
}
