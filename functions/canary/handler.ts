// The canary, on an EventBridge schedule: a few synthetic records to each partition of the canary
// topic through the real publish path, read back by a consumer of its own; availability,
// latency, losses and duplicates as metrics and as its result (core/canary/run-canary.ts). The scheduled
// audit of the same topic (serverless.yml) judges them again, as it judges any stream.
import { createCanaryTopic } from '../adapters/kafka/canary-topic.js';
import { type CanaryOutcome, runCanary } from '../core/canary/run-canary.js';
import type { PublishResult } from '../core/publish/ports.js';
import { parseRecord } from '../core/rest-proxy/record-input.js';
import { Deadline } from '../core/shared/deadline.js';
import { kafkaClient } from '../platform/kafka-client.js';
import { lazyRuntime } from '../platform/lazy-runtime.js';
import { log } from '../platform/log.js';
import { taskHandler } from '../platform/task.js';
import { publish, publishOptions } from '../publishing/publish.js';
import { publishRuntime } from '../publishing/runtime.js';
import { loadCanaryConfig } from './config.js';
import { publishCanaryMetrics } from './metrics.js';

// Read when the module loads: a bad setting fails the cold start, naming the variable.
const canary = loadCanaryConfig();

const canaryRuntime = lazyRuntime(async () => {
  const rt = await publishRuntime();
  const topic = createCanaryTopic(await kafkaClient(rt.config, 'canary'), canary);
  return { rt, canary, topic };
});

/** The canary's outcome of its one record, from the publish result. */
function canaryOutcome(result: PublishResult): CanaryOutcome {
  const [first] = result.results;
  if (first?.kind === 'published') {
    const o = first.outcome;
    return o.status === 'ACKED'
      ? { status: 'ACKED', seq: first.seq, partition: o.partition, offset: Number(o.offset) }
      : { status: o.status, seq: first.seq, message: 'message' in o ? o.message : undefined };
  }
  if (first) return { status: 'REFUSED', message: JSON.stringify(first).slice(0, 200) };
  return { status: 'NOT_SENT', message: 'no answer' };
}

/** Time kept back at the end of the run for the read-back's consumer to leave its group. */
const MARGIN_MS = 5000;

export const handler = taskHandler(async (_input: unknown, context) => {
  const { rt, canary, topic } = await canaryRuntime();
  const deadline = new Deadline(Date.now() + context.getRemainingTimeInMillis() - MARGIN_MS);
  const report = await runCanary(
    {
      partitions: topic.partitions,
      readBack: topic.readBack,
      now: () => performance.now(),
      async publish(request, publishDeadline): Promise<CanaryOutcome> {
        const options = publishOptions(
          {
            topic: request.topic,
            stream: request.stream,
            idempotencyKey: undefined,
            timeoutMs: Math.min(10_000, publishDeadline.remainingMs()),
          },
          context,
          rt,
          { stream: 'TALLY_CANARY_STREAM', idempotencyKey: '-', timeoutMs: '-' },
        );
        const record = parseRecord({
          partition_id: request.partition,
          value: { type: 'JSON', data: JSON.parse(request.value) },
        });
        // Keyless: nothing is stored, so the canary's answer is its outcome itself.
        return publish(rt, { ...options, records: [record] }, canaryOutcome).catch(
          (error: unknown): CanaryOutcome => ({
            status: 'ERROR',
            message: (error as Error).message,
          }),
        );
      },
    },
    canary,
    deadline,
  );
  publishCanaryMetrics(report);
  if (report.lost.length > 0 || report.duplicated.length > 0 || report.availability < 1) {
    log('warn', 'canary found a problem', { ...report });
  }
  return report;
});
