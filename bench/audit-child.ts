// One measured run in a fresh process, so its peak RSS is its own: BENCH_MODE=audit runs the
// audit function's runtime (as its Lambda handler does) over BENCH_TOPIC; BENCH_MODE=raw scans the
// same topic with a bare kafkajs consumer, the floor: the audit scanner's consumer settings, and
// each record decoded as far as the audit needs it (offset and timestamp as numbers, the
// `tally.stream`, `tally.seq` and `tally.session` headers as text), nothing accounted. Prints one
// JSON line on stdout (`firstBatchMs`: when the first records came, from the start). Bundled by
// bench/audit.ts, and from an older checkout for a before/after run (BENCH_AUDIT_BEFORE).
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Kafka, logLevel } from 'kafkajs';
import { auditRuntime } from '../functions/audit/runtime.js';

const topic = String(process.env.BENCH_TOPIC);
const peakRssMB = () => Math.round(process.resourceUsage().maxRSS / 1024);

/** A header value as text, as a plain consumer reads it. */
const headerText = (value: Buffer | string | (Buffer | string)[] | undefined) =>
  (Array.isArray(value) ? value[0] : value)?.toString();

async function raw() {
  const kafka = new Kafka({
    clientId: 'tally-bench-raw',
    brokers: String(process.env.KAFKA_BROKERS).split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const start = performance.now();
  const ends = new Map(
    (await admin.fetchTopicOffsets(topic))
      .filter((o) => Number(o.high) > Number(o.low))
      .map((o) => [o.partition, Number(o.high)]),
  );
  const groupId = `tally-bench-raw-${randomBytes(4).toString('hex')}`;
  // As functions/adapters/kafka/log-scanner.ts makes its consumer.
  const consumer = kafka.consumer({
    groupId,
    sessionTimeout: 30_000,
    heartbeatInterval: 3000,
    maxBytes: 16 * 1024 * 1024,
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let records = 0;
  let firstBatchMs: number | undefined;
  // What the decoded fields add up to, so the decoding cannot be left out as unused.
  let checksum = 0;
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          firstBatchMs ??= performance.now() - start;
          for (const message of batch.messages) {
            const { headers } = message;
            checksum +=
              Number(message.offset) +
              (Number(message.timestamp) % 2) +
              (headerText(headers?.['tally.stream'])?.length ?? 0) +
              Number(headerText(headers?.['tally.seq'])) +
              (headerText(headers?.['tally.session'])?.length ?? 0);
          }
          records += batch.messages.length;
          if (Number(batch.lastOffset()) + 1 >= (ends.get(batch.partition) ?? 0))
            ends.delete(batch.partition);
          if (ends.size === 0) resolve();
        },
      })
      .catch(reject);
  });
  const wallMs = performance.now() - start;
  await consumer.disconnect();
  await admin.deleteGroups([groupId]).catch(() => {});
  await admin.disconnect();
  return { records, wallMs, firstBatchMs, checksum };
}

async function audit() {
  const rt = await auditRuntime();
  await rt.clusterId(); // connects, as a warm container would be
  const start = performance.now();
  const report = await rt.auditAndStore(topic, [String(process.env.BENCH_GROUP)], 900_000);
  const wallMs = performance.now() - start;
  const [stream] = report.streams.filter((s) => s.inLog > 0);
  return {
    records: report.scanned,
    wallMs,
    complete: report.complete,
    timingsMs: report.timingsMs,
    findings: stream && {
      produced: stream.produced,
      inLog: stream.inLog,
      producerDuplicates: stream.producerDuplicates.length,
      namedWithBothCopies: stream.producerDuplicates.filter((d) => d.copies.length === d.times)
        .length,
      lost: stream.lost.reduce((n, l) => n + l.to - l.from + 1, 0),
      pending: stream.pending.reduce((n, p) => n + p.to - p.from + 1, 0),
      unknownLanded: report.settled.landed,
      unknownNotWritten: report.settled.notWritten,
      buckets: stream.buckets.length,
    },
  };
}

// The audit's EMF metric lines go to stdout in Lambda; here stdout carries our JSON only.
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (() => true) as typeof process.stdout.write;
const result = process.env.BENCH_MODE === 'raw' ? await raw() : await audit();
write(`${JSON.stringify({ ...result, peakRssMB: peakRssMB() })}\n`);
process.exit(0);
