import { randomBytes } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { lazyAdmin } from './lazy-admin.js';

export interface ScannedRecord {
  readonly partition: number;
  readonly offset: number;
  /** Header values as text (the first value of a repeated header). */
  readonly headers: Readonly<Record<string, string | undefined>>;
}

/**
 * Reads a topic from its log start to the high watermarks seen when the scan starts, with a
 * throwaway consumer group that commits nothing and is deleted afterwards.
 */
export function createLogScanner(kafka: Kafka) {
  const admin = lazyAdmin(kafka);
  return {
    async scan(
      topic: string,
      onRecord: (record: ScannedRecord) => void,
      timeoutMs: number,
    ): Promise<number> {
      const offsets = await (await admin()).fetchTopicOffsets(topic);
      const targets = new Map(
        offsets
          .filter((o) => Number(o.high) > Number(o.low))
          .map((o) => [o.partition, Number(o.high)]),
      );
      if (targets.size === 0) return 0;
      const groupId = `tally-audit-${randomBytes(6).toString('hex')}`;
      const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000 });
      let scanned = 0;
      try {
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        const remaining = new Set(targets.keys());
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`log scan of ${topic} did not finish in ${timeoutMs} ms`)),
            timeoutMs,
          );
          consumer
            .run({
              autoCommit: false,
              eachBatch: async ({ batch }) => {
                const high = targets.get(batch.partition) ?? 0;
                for (const message of batch.messages) {
                  const offset = Number(message.offset);
                  if (offset >= high) break;
                  const headers: Record<string, string | undefined> = {};
                  for (const [name, value] of Object.entries(message.headers ?? {})) {
                    const first = Array.isArray(value) ? value[0] : value;
                    headers[name] = first?.toString();
                  }
                  onRecord({ partition: batch.partition, offset, headers });
                  scanned++;
                }
                const last = Number(batch.lastOffset());
                if (last + 1 >= high) remaining.delete(batch.partition);
                if (remaining.size === 0) {
                  clearTimeout(timer);
                  resolve();
                }
              },
            })
            .catch(reject);
        });
      } finally {
        await consumer.disconnect().catch(() => {});
        await (await admin()).deleteGroups([groupId]).catch(() => {});
      }
      return scanned;
    },
  };
}
