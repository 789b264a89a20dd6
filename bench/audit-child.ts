// One measured run in a fresh process, so its peak RSS is its own: BENCH_MODE=audit runs the
// audit function's runtime (as its Lambda handler does) over BENCH_TOPIC; BENCH_MODE=raw scans the
// same topic with a bare kafkajs consumer (the fastest way to read it with this client). Prints
// one JSON line on stdout. Bundled by bench/audit.ts.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Kafka, logLevel } from 'kafkajs';
import { auditRuntime } from '../functions/audit/runtime.js';

const topic = String(process.env.BENCH_TOPIC);
const peakRssMB = () => Math.round(process.resourceUsage().maxRSS / 1024);

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
  const consumer = kafka.consumer({ groupId, maxBytes: 16 * 1024 * 1024 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let records = 0;
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
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
  return { records, wallMs };
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
