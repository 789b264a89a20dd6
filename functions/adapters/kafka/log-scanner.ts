import { randomBytes } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { ScannedRecord, ScanRequest, ScanResult } from '../../core/audit/ports.js';
import { DependencyUnavailableError, NotFoundError, TallyError } from '../../core/shared/errors.js';
import { kafkaFailure } from './client.js';
import { isStaleTopicError, lazyAdmin } from './lazy-admin.js';

/**
 * The `tally.stream`, `tally.seq` and `tally.session` headers as text (the first value of a
 * repeated header); others are not read. Consecutive records of a log mostly repeat
 * `tally.stream` and `tally.session`: a value whose bytes equal the previous record's reuses its
 * text (a byte compare, not a decode and a string). Each record's answer has the same three
 * properties (undefined when absent), in the same order, so the code reading them stays on one
 * object shape.
 */
export function createHeaderReader() {
  const stream = repeatedText();
  const session = repeatedText();
  return (headers: Record<string, unknown> | undefined): Record<string, string | undefined> => {
    if (headers === undefined) return {};
    return {
      'tally.stream': stream(headers['tally.stream']),
      'tally.seq': text(headers['tally.seq']),
      'tally.session': session(headers['tally.session']),
    };
  };
}

/** A header value as kafkajs hands it over (a Buffer, a repeated header's array, null) as text. */
function text(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined || first === null) return undefined;
  return Buffer.isBuffer(first) ? first.toString() : String(first);
}

/**
 * Whether two buffers hold the same bytes. Header values are short: a loop here costs less than
 * the call into native code `Buffer.equals` makes (which longer ones still take).
 */
export function sameBytes(a: Buffer, b: Buffer): boolean {
  const length = a.length;
  if (length !== b.length) return false;
  if (length > 64) return a.equals(b);
  for (let i = length - 1; i >= 0; i--) if (a[i] !== b[i]) return false;
  return true;
}

/** `text` for a header whose value mostly repeats the previous record's. */
function repeatedText() {
  let lastBytes: Buffer | undefined;
  let lastText: string | undefined;
  return (value: unknown): string | undefined => {
    const first = Array.isArray(value) ? value[0] : value;
    if (!Buffer.isBuffer(first)) return text(first);
    if (lastBytes !== undefined && sameBytes(lastBytes, first)) return lastText;
    lastBytes = first;
    lastText = first.toString();
    return lastText;
  };
}

/** A topic that does not exist is the caller's 404; anything else, Kafka not answering. */
function offsetsUnavailable(topic: string, error: unknown): Error {
  const type = (error as { type?: string } | null)?.type;
  if (isStaleTopicError(error) || type === 'INVALID_TOPIC_EXCEPTION') {
    return new NotFoundError(`topic: ${topic} does not exist in this cluster`, {
      field: 'topic',
      cause: error,
    });
  }
  return new DependencyUnavailableError(`Kafka did not give the offsets of ${topic}`, {
    cause: error,
  });
}

/**
 * Reads offset ranges of a topic with a throwaway consumer group that commits nothing and is
 * deleted afterwards. Stops at the deadline between batches and says where each partition
 * stopped, so the caller can checkpoint and continue later.
 */
export function createLogScanner(kafka: Kafka) {
  const admin = lazyAdmin(kafka);
  /**
   * kafkajs retries fetchTopicOffsets of a missing topic for ~10 s and then names no topic error;
   * its metadata call answers at once. A missing topic is the caller's 404, so it is asked first
   * (and the client, which now holds the name as a metadata target, is replaced).
   */
  const requireTopic = async (topic: string) => {
    try {
      await (await admin()).fetchTopicMetadata({ topics: [topic] });
    } catch (error) {
      if (isStaleTopicError(error)) admin.reset();
      throw offsetsUnavailable(topic, error);
    }
  };
  return {
    async scan(
      topic: string,
      request: ScanRequest,
      onRecord: (record: ScannedRecord) => void,
    ): Promise<ScanResult> {
      await requireTopic(topic);
      const offsets = await (await admin()).fetchTopicOffsets(topic).catch((error: unknown) => {
        throw offsetsUnavailable(topic, error);
      });
      const logStart = new Map(offsets.map((o) => [o.partition, Number(o.low)]));
      const next = new Map<number, number>();
      const ends = new Map<number, number>();
      const tallyHeaders = createHeaderReader();
      for (const o of offsets) {
        const low = Number(o.low);
        const high = Number(o.high);
        const until = request.until ? request.until.get(o.partition) : high;
        if (until === undefined) continue;
        const start = Math.max(request.from?.get(o.partition) ?? low, low);
        const end = Math.min(until, high);
        next.set(o.partition, start);
        if (start < end) ends.set(o.partition, end);
      }
      if (ends.size === 0) return { scanned: 0, next, logStart, complete: true };
      if (Date.now() >= request.deadlineAt) return { scanned: 0, next, logStart, complete: false };

      const groupId = `tally-audit-${randomBytes(6).toString('hex')}`;
      const consumer = kafka.consumer({
        groupId,
        sessionTimeout: 30_000,
        heartbeatInterval: 3000,
        maxBytes: 16 * 1024 * 1024,
      });
      let scanned = 0;
      let complete = false;
      let stopped = false;
      // Settles true once records may be handed over; false when the caller's promise failed.
      let gate = request.after?.then(
        () => true,
        () => false,
      );
      /**
       * Starts each partition where this read begins. kafkajs forgets seeks when its consumer
       * restarts after a crash, so this runs again on every group join; a seek it refuses (its
       * group not joined yet) costs only time, as records before `next` are skipped anyway.
       */
      const seekAll = () => {
        for (const [partition, end] of ends) {
          const offset = next.get(partition) ?? 0;
          if (offset >= end) continue;
          try {
            consumer.seek({ topic, partition, offset: String(offset) });
          } catch {
            // Not joined (yet): the next GROUP_JOIN seeks again.
          }
        }
      };
      try {
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        const remaining = new Set(ends.keys());
        await new Promise<void>((resolve, reject) => {
          const stop = (finished: boolean) => {
            stopped = true;
            complete = finished;
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(() => stop(false), Math.max(0, request.deadlineAt - Date.now()));
          consumer.on(consumer.events.GROUP_JOIN, seekAll);
          // A crash kafkajs will not restart from would otherwise leave this read waiting for its
          // deadline.
          consumer.on(consumer.events.CRASH, ({ payload }) => {
            if (payload.restart) return;
            clearTimeout(timer);
            reject(payload.error);
          });
          consumer
            .run({
              autoCommit: false,
              eachBatch: async ({ batch }) => {
                if (gate !== undefined) {
                  if (!(await gate)) return stop(false);
                  gate = undefined;
                }
                // The deadline may have stopped this read while it waited.
                if (stopped) return;
                const end = ends.get(batch.partition);
                if (end === undefined || !remaining.has(batch.partition)) return;
                if (Date.now() >= request.deadlineAt) return stop(false);
                const start = next.get(batch.partition) ?? 0;
                let position = start;
                for (const message of batch.messages) {
                  const offset = Number(message.offset);
                  if (offset < start) continue;
                  if (offset >= end) break;
                  onRecord({
                    partition: batch.partition,
                    offset,
                    timestamp: Number(message.timestamp),
                    headers: tallyHeaders(message.headers),
                  });
                  scanned++;
                  position = offset + 1;
                }
                // Offsets without records (transaction markers, compacted) still move us on.
                position = Math.min(Math.max(position, Number(batch.lastOffset()) + 1), end);
                next.set(batch.partition, position);
                if (position >= end) remaining.delete(batch.partition);
                if (remaining.size === 0) stop(true);
              },
            })
            .then(() => {
              seekAll();
              const idle = offsets
                .map((o) => o.partition)
                .filter((partition) => !ends.has(partition));
              if (idle.length > 0) consumer.pause([{ topic, partitions: idle }]);
            })
            .catch((error: unknown) => {
              clearTimeout(timer);
              reject(error);
            });
        });
      } catch (error) {
        if (error instanceof TallyError) throw error;
        // What was read before the failure is lost with this run: the checkpoint is not moved.
        throw new DependencyUnavailableError(
          `Kafka stopped the audit's read of ${topic} (${kafkaFailure(error)}); nothing was judged`,
          { cause: error },
        );
      } finally {
        await consumer.disconnect().catch(() => {});
        await admin()
          .then((client) => client.deleteGroups([groupId]))
          .catch(() => {});
      }
      return { scanned, next, logStart, complete };
    },
  };
}
