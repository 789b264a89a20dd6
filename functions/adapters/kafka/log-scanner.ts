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
      // read_committed (docs/audit.md): what the audit counts is what read_committed consumers
      // see; copies of aborted transactions are handed over apart (`aborted`).
      const consumer = kafka.consumer({
        groupId,
        sessionTimeout: 30_000,
        heartbeatInterval: 3000,
        maxBytes: 16 * 1024 * 1024,
        readUncommitted: false,
      });
      /** Offsets kafkajs filtered whole (only aborted records and markers): read again below. */
      const hidden: AbortedRange[] = [];
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
          // A fetch holding only aborted records and markers never reaches eachBatch (kafkajs's
          // runner, isEmptyDueToFiltering): its end still moves the read on, or a partition whose
          // last transaction was aborted would never be read to its end.
          consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
            if (stopped || payload.topic !== topic || payload.lastOffset === undefined) return;
            const end = ends.get(payload.partition);
            if (end === undefined || !remaining.has(payload.partition)) return;
            const from = next.get(payload.partition) ?? 0;
            const to = Math.min(Number(payload.lastOffset) + 1, end);
            if (to <= from) return;
            hidden.push({ partition: payload.partition, from, to });
            next.set(payload.partition, to);
            if (to >= end) remaining.delete(payload.partition);
            if (remaining.size === 0) stop(true);
          });
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
                const visible = new Set<string>();
                for (const message of batch.messages) {
                  visible.add(message.offset);
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
                // Records of aborted transactions in the same fetch: kafkajs's Batch keeps them in
                // messagesWithinOffset (what it filtered batch.messages from).
                for (const message of withinOffset(batch)) {
                  const offset = Number(message.offset);
                  if (offset < start || offset >= end) continue;
                  if (message.isControlRecord || visible.has(message.offset)) continue;
                  onRecord({
                    partition: batch.partition,
                    offset,
                    timestamp: Number(message.timestamp),
                    headers: tallyHeaders(message.headers),
                    aborted: true,
                  });
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
        if (hidden.length > 0) {
          await readAborted(kafka, topic, hidden, {
            deadlineAt: request.deadlineAt,
            headers: tallyHeaders,
            onRecord,
            deleteGroup: (id) => admin().then((client) => client.deleteGroups([id])),
          });
        }
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

/** Offsets `from` (inclusive) to `to` of a partition that held only aborted records and markers. */
interface AbortedRange {
  readonly partition: number;
  readonly from: number;
  readonly to: number;
}

type RawMessage = {
  readonly offset: string;
  readonly timestamp: string;
  readonly headers?: Record<string, unknown>;
  readonly isControlRecord?: boolean;
};

/** Every record of a kafkajs Batch within its fetch offset, before aborted ones were filtered. */
function withinOffset(batch: unknown): readonly RawMessage[] {
  const raw = (batch as { messagesWithinOffset?: unknown }).messagesWithinOffset;
  return Array.isArray(raw) ? (raw as RawMessage[]) : [];
}

/**
 * The records of `ranges`, read read_uncommitted (kafkajs still drops the markers): each range
 * held nothing a read_committed read sees, so every record there is an aborted copy. Bounded by
 * the scan's deadline: copies not read by then go uncounted (docs/audit.md).
 */
async function readAborted(
  kafka: Kafka,
  topic: string,
  ranges: readonly AbortedRange[],
  options: {
    readonly deadlineAt: number;
    readonly headers: ReturnType<typeof createHeaderReader>;
    readonly onRecord: (record: ScannedRecord) => void;
    readonly deleteGroup: (groupId: string) => Promise<unknown>;
  },
): Promise<void> {
  const { deadlineAt, onRecord } = options;
  const groupId = `tally-audit-${randomBytes(6).toString('hex')}`;
  const consumer = kafka.consumer({ groupId, readUncommitted: true, maxWaitTimeInMs: 100 });
  const todo = new Map<number, AbortedRange[]>();
  for (const range of ranges)
    todo.set(range.partition, [...(todo.get(range.partition) ?? []), range]);
  const position = new Map([...todo].map(([p, list]) => [p, Math.min(...list.map((r) => r.from))]));
  const until = new Map([...todo].map(([p, list]) => [p, Math.max(...list.map((r) => r.to))]));
  const seekAll = () => {
    for (const [partition, offset] of position) {
      try {
        consumer.seek({ topic, partition, offset: String(offset) });
      } catch {
        // Not joined yet: the next GROUP_JOIN seeks again.
      }
    }
  };
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, deadlineAt - Date.now()));
      const advance = (partition: number, to: number) => {
        if (to <= (position.get(partition) ?? 0)) return;
        position.set(partition, to);
        if ([...until].every(([p, end]) => (position.get(p) ?? 0) >= end)) {
          clearTimeout(timer);
          resolve();
        }
      };
      consumer.on(consumer.events.GROUP_JOIN, seekAll);
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (payload.restart) return;
        clearTimeout(timer);
        resolve();
      });
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            const list = todo.get(batch.partition);
            if (list === undefined) return;
            for (const message of batch.messages) {
              const offset = Number(message.offset);
              if (!list.some((r) => offset >= r.from && offset < r.to)) continue;
              onRecord({
                partition: batch.partition,
                offset,
                timestamp: Number(message.timestamp),
                headers: options.headers(message.headers as Record<string, unknown> | undefined),
                aborted: true,
              });
            }
            advance(batch.partition, Number(batch.lastOffset()) + 1);
          },
        })
        .then(seekAll)
        .catch(() => {
          clearTimeout(timer);
          resolve();
        });
    });
  } finally {
    await consumer.disconnect().catch(() => {});
    await options.deleteGroup(groupId).catch(() => {});
  }
}
