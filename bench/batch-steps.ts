// Tally's own CPU per 1,000-record batch (issue 32): the pure steps of the v3 batch route, run
// in-process many times, with no I/O and no client library doing work.
//
//   node --import tsx bench/batch-steps.ts                       this checkout, one measurement
//   node --import tsx bench/batch-steps.ts --compare <dir> --rounds 7
//        this checkout and <dir> (an earlier checkout's tree with its functions/; node_modules
//        found from it or linked into it), in alternating child processes, round by round
//   node --cpu-prof --cpu-prof-dir=<d> --import tsx bench/batch-steps.ts --batches 2000
//        a profile of the steps alone (bench/cpuprofile-summary.ts <d>/*.cpuprofile)
//
// Options: --root <dir> (whose functions/ to run; default this checkout), --batches N measured
// batches per value size (default 400, after 200 warm-up batches), --values 100,1000 (bytes).
//
// The steps are what the batch handler runs on its thread for a request, from the body to the
// answer, minus the clients: the body's text and size (publish/body-text.ts), JSON parsing
// (rest-proxy/json-stream.ts), the entries and records (batch-input.ts, record-input.ts), the
// answer's bound (answer-bound.ts), the publisher's checks, sizing and plan (publisher.ts,
// plan.ts), the send step (send-step.ts), the record sender's messages, sizes and batches
// (adapters/kafka/record-sender.ts, record-batches.ts; its producer answers at once here), the
// ledger block's item (adapters/dynamodb/ledger.ts; its client answers at once here) and the
// answer (reports.ts). Not counted: kafkajs's encoding and network, the AWS SDK's middleware and
// HTTP (both measured in bench/publish.ts), middy, logging and metrics. The body is the one
// bench/publish.ts sends: STRING keys `k-<i>`, STRING values `<i>:xxx…` of the given size.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { RecordInput } from '../functions/core/publish/record.js';
import type { TallyError } from '../functions/core/shared/errors.js';

const here = resolve(fileURLToPath(import.meta.url), '../..');

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

const RECORDS = 1000;
const PARTITIONS = 3;
const WARMUP = 200;
const batches = Number(option('--batches') ?? 400);
const valueSizes = (option('--values') ?? '100,1000').split(',').map(Number);
if (!Number.isSafeInteger(batches) || batches <= 0)
  throw new Error('--batches: a positive integer');
if (valueSizes.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error('--values: sizes');

interface Figures {
  /** CPU (user + system) of this process per batch, ms: GC included. */
  readonly cpuMs: number;
  readonly wallMs: number;
}

/** Runs the steps from `root`'s functions/ and returns per-batch figures by value size. */
async function measure(root: string): Promise<Record<string, Figures>> {
  const load = async <T>(path: string) =>
    (await import(pathToFileURL(join(root, 'functions', path)).href)) as T;
  const { bodyText } =
    await load<typeof import('../functions/publish/body-text.js')>('publish/body-text.ts');
  const { parseJsonSequence } = await load<
    typeof import('../functions/core/rest-proxy/json-stream.js')
  >('core/rest-proxy/json-stream.ts');
  const { parseBatch } = await load<typeof import('../functions/core/rest-proxy/batch-input.js')>(
    'core/rest-proxy/batch-input.ts',
  );
  const { requireAnswerFits } = await load<
    typeof import('../functions/core/rest-proxy/answer-bound.js')
  >('core/rest-proxy/answer-bound.ts');
  const { batchResponseBody } = await load<
    typeof import('../functions/core/rest-proxy/reports.js')
  >('core/rest-proxy/reports.ts');
  const { createPublisher, isSettledResult } = await load<
    typeof import('../functions/core/publish/publisher.js')
  >('core/publish/publisher.ts');
  const { createRecordSender } = await load<
    typeof import('../functions/adapters/kafka/record-sender.js')
  >('adapters/kafka/record-sender.ts');
  const { createLedger } = await load<typeof import('../functions/adapters/dynamodb/ledger.js')>(
    'adapters/dynamodb/ledger.ts',
  );
  // The plain batch read of batch-handler.ts (issue 32), where the tree has it: as its handler.
  const plainBatch = existsSync(join(root, 'functions/core/rest-proxy/batch-text.ts'))
    ? (
        await load<typeof import('../functions/core/rest-proxy/batch-text.js')>(
          'core/rest-proxy/batch-text.ts',
        )
      ).parsePlainBatch
    : () => undefined;
  const { Deadline } =
    await load<typeof import('../functions/core/shared/deadline.js')>('core/shared/deadline.ts');

  // A producer that acknowledges every message at once (one base offset per partition), and a
  // DynamoDB client that answers every command with nothing: the steps around them are Tally's.
  const offsets: number[] = [];
  const producer = {
    connect: async () => {},
    disconnect: async () => {},
    send: async ({ topic, messages }: { topic: string; messages: { partition?: number }[] }) => {
      const counts: number[] = [];
      for (const m of messages) {
        const p = m.partition ?? 0;
        counts[p] = (counts[p] ?? 0) + 1;
      }
      const metadata = [];
      for (let partition = 0; partition < counts.length; partition++) {
        const count = counts[partition];
        if (count === undefined) continue;
        const base = offsets[partition] ?? 0;
        offsets[partition] = base + count;
        metadata.push({ topicName: topic, partition, errorCode: 0, baseOffset: String(base) });
      }
      return metadata;
    },
  };
  const kafka = { producer: () => producer } as unknown as Parameters<typeof createRecordSender>[0];
  const sender = createRecordSender(kafka, {
    retries: 1,
    requestTimeoutMs: 30_000,
    maxBatchBytes: async () => 1_048_588,
    log: () => {},
  });
  const client = { send: async () => ({}) } as unknown as Parameters<typeof createLedger>[0];
  const ledger = createLedger(client, 'ledger');
  let nextSeq = 1;
  const topic = 'bench-batch-steps';
  const publisher = createPublisher({
    catalog: {
      describe: async () => ({ partitions: PARTITIONS, maxMessageBytes: 1_048_588 }),
    } as unknown as Parameters<typeof createPublisher>[0]['catalog'],
    sender,
    ledger,
    keyed: {} as Parameters<typeof createPublisher>[0]['keyed'],
    // Leased seqs: no round trip, and the fast path (the allocation is the write-ahead record).
    allocator: {
      allocate: async (_stream: string, count: number, home: string) => {
        const firstSeq = nextSeq;
        nextSeq += count;
        return { firstSeq, allocatedAt: Date.now(), homeTopic: home };
      },
    },
    auditHorizonMs: 600_000,
    allowTopic: () => true,
  });
  const clusterId = 'bench-cluster';

  const out: Record<string, Figures> = {};
  for (const bytes of valueSizes) {
    const body = JSON.stringify({
      entries: Array.from({ length: RECORDS }, (_, i) => ({
        id: `e${i}`,
        key: { type: 'STRING', data: `k-${i}` },
        value: { type: 'STRING', data: `${i}:`.padEnd(bytes, 'x') },
      })),
    });
    const one = async (): Promise<string> => {
      const text = bodyText({ body, isBase64Encoded: false }, 6 * 1024 * 1024);
      const { ids, records: parsed } =
        plainBatch(text, RECORDS) ??
        parseBatch(parseJsonSequence(text, RECORDS)[0] ?? null, RECORDS, false);
      // Without a registry every record is bytes already (publishing/publish.ts encodeRecords).
      const records = parsed as ReadonlyArray<RecordInput | TallyError>;
      const now = Date.now();
      const request = {
        topic,
        stream: topic,
        idempotencyKey: undefined,
        deadline: new Deadline(now + 29_000),
        now,
        records,
      };
      requireAnswerFits({ route: 'batch', clusterId, ids, topic, stream: topic }, records);
      const { answer } = await publisher.publishAnswered(request as never, (result) => ({
        answer: batchResponseBody(clusterId, ids, result),
        settled: isSettledResult(result),
      }));
      return answer;
    };
    // The answer must be a whole success: a step that failed would make the figure meaningless.
    const first = JSON.parse(await one()) as { successes: unknown[]; failures: unknown[] };
    if (first.successes.length !== RECORDS || first.failures.length !== 0) {
      throw new Error(`batch-steps: the answer is not ${RECORDS} successes`);
    }
    for (let i = 0; i < WARMUP; i++) await one();
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < batches; i++) await one();
    const wall = performance.now() - start;
    const used = process.cpuUsage(cpu);
    out[`value${bytes}B`] = {
      cpuMs: (used.user + used.system) / 1000 / batches,
      wallMs: wall / batches,
    };
  }
  await sender.close();
  return out;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const compare = option('--compare');
if (compare === undefined) {
  const root = resolve(option('--root') ?? here);
  console.log(JSON.stringify({ root, batches, figures: await measure(root) }));
} else {
  // Alternating child processes, `before` first in odd rounds: each side warms its own JIT.
  const rounds = Number(option('--rounds') ?? 5);
  const sides = { before: resolve(compare), after: here };
  if (!existsSync(join(sides.before, 'functions'))) throw new Error(`${compare}: no functions/`);
  const got: Record<string, Record<string, number[]>> = { before: {}, after: {} };
  const loads: number[] = [loadavg()[0] ?? Number.NaN];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
    for (const side of order) {
      const child = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          fileURLToPath(import.meta.url),
          '--root',
          sides[side],
          '--batches',
          String(batches),
          '--values',
          valueSizes.join(','),
        ],
        { cwd: here, encoding: 'utf8' },
      );
      if (child.status !== 0) throw new Error(`${side}: ${child.stderr}`);
      const { figures } = JSON.parse(child.stdout.trim().split('\n').pop() as string) as {
        figures: Record<string, Figures>;
      };
      for (const [size, f] of Object.entries(figures)) {
        (got[side] as Record<string, number[]>)[size] ??= [];
        (got[side] as Record<string, number[]>)[size]?.push(f.cpuMs);
      }
    }
    loads.push(loadavg()[0] ?? Number.NaN);
  }
  const commit = (dir: string) => {
    try {
      const git = (...args: string[]) =>
        execFileSync('git', ['-C', dir, ...args], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim();
      return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', 'functions') ? ' + changes' : ''}`;
    } catch {
      return 'unknown';
    }
  };
  console.log(
    `Tally's own CPU per ${RECORDS.toLocaleString('en')}-record batch (ms, median (min–max) of ${rounds} rounds × ${batches} batches; load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)})`,
  );
  console.log(
    `before: ${sides.before} (${commit(sides.before)}); after: ${here} (${commit(here)})`,
  );
  console.log('| values | before | after | after ÷ before |');
  console.log('| --- | --- | --- | --- |');
  for (const size of Object.keys(got.before ?? {})) {
    const b = got.before?.[size] ?? [];
    const a = got.after?.[size] ?? [];
    const f = (xs: number[]) =>
      `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
    console.log(`| ${size} | ${f(b)} | ${f(a)} | ${(median(a) / median(b)).toFixed(2)} |`);
  }
  console.log(JSON.stringify({ rounds, batches, loads, cpuMs: got }));
}
