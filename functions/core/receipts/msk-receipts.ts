import { InvalidInputError } from '../shared/errors.js';

// Receipts: what a downstream consumer group processed, by the `tally.*` headers of each record.
// A batch keeps runs of consecutive seqs in the order they were processed, without merging, so a
// seq processed twice stays visible as twice (a consumer-side duplicate).

export type SeqRun = readonly [from: number, to: number];
/** Offsets a batch processed on one partition: [partition, first offset, last offset]. */
export type OffsetRun = readonly [partition: number, from: number, to: number];

export interface ReceiptBatch {
  readonly group: string;
  readonly stream: string;
  readonly topic: string | undefined;
  readonly seqs: readonly SeqRun[];
  /**
   * Seqs delivered again and suppressed by the once guard (already done by the group): not
   * acted on this time. Absent for consumers without the guard.
   */
  readonly suppressed?: readonly SeqRun[];
  readonly offsets: readonly OffsetRun[];
  /** Records processed, including any without Tally headers. */
  readonly count: number;
}

/**
 * What the receipts read of a record Lambda's MSK trigger delivers: the part of aws-lambda's
 * DeliveredRecord they use, so Lambda's event types stay out of the core (an DeliveredRecord is one).
 */
interface DeliveredRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** Each header's value as the bytes Lambda gives, by header name. */
  readonly headers?: ReadonlyArray<Readonly<Record<string, number[]>>>;
}

/** Compresses seqs into runs of +1 steps, in the order given. */
export function toRuns(values: readonly number[]): SeqRun[] {
  const runs: Array<[number, number]> = [];
  for (const value of values) {
    const last = runs[runs.length - 1];
    if (last && value === last[1] + 1) last[1] = value;
    else runs.push([value, value]);
  }
  return runs;
}

export function headerText(record: DeliveredRecord, name: string): string | undefined {
  for (const header of record.headers ?? []) {
    if (typeof header !== 'object' || header === null) continue;
    const bytes = header[name];
    if (Array.isArray(bytes)) return Buffer.from(bytes).toString('utf8');
  }
  return undefined;
}

/** Lambda's MSK event shape, checked before it is read: `{ "<topic>-<partition>": [record] }`. */
export function checkMskRecords(records: unknown): void {
  if (typeof records !== 'object' || records === null || Array.isArray(records)) {
    throw new InvalidInputError('records: an MSK event maps "<topic>-<partition>" to records', {
      field: 'records',
    });
  }
  for (const [key, list] of Object.entries(records)) {
    const bad = !Array.isArray(list)
      ? 'is not a list'
      : list.findIndex(
          (r: unknown) =>
            typeof r !== 'object' ||
            r === null ||
            typeof (r as DeliveredRecord).topic !== 'string' ||
            !Number.isSafeInteger((r as DeliveredRecord).partition) ||
            !Number.isSafeInteger((r as DeliveredRecord).offset) ||
            ((r as DeliveredRecord).headers !== undefined &&
              !Array.isArray((r as DeliveredRecord).headers)),
        );
    if (bad !== -1) {
      const field =
        typeof bad === 'number'
          ? `records[${JSON.stringify(key)}][${bad}]`
          : `records[${JSON.stringify(key)}]`;
      throw new InvalidInputError(
        `${field}: ${typeof bad === 'number' ? 'not an MSK record {topic, partition, offset, headers?}' : bad}`,
        { field },
      );
    }
  }
}

/** What became of a record under the once guard: acted on, suppressed, or left for a retry. */
export type RecordFate = 'acted' | 'suppressed' | 'failed';

/** Lambda's MSK event, checked before it is read: its records by "<topic>-<partition>". */
export function checkMskEvent(
  event: unknown,
): Readonly<Record<string, readonly DeliveredRecord[]>> {
  if (typeof event !== 'object' || event === null) {
    throw new InvalidInputError('event: an MSK event {eventSource, records}', { field: 'event' });
  }
  const records = (event as { records?: unknown }).records ?? {};
  checkMskRecords(records);
  return records as Readonly<Record<string, readonly DeliveredRecord[]>>;
}

/**
 * The receipts of one MSK-triggered invocation: one batch per (topic, stream); records without
 * `tally.stream`/`tally.seq` are counted under stream "" (a count-only receipt). With `fate`
 * (the once guard's), failed records are left out (they come again) and suppressed seqs are
 * receipted as suppressed.
 */
export function receiptsFromMsk(
  group: string,
  records: Readonly<Record<string, readonly DeliveredRecord[]>>,
  fate: (record: DeliveredRecord) => RecordFate = () => 'acted',
): ReceiptBatch[] {
  const batches = new Map<
    string,
    {
      topic: string;
      stream: string;
      seqs: number[];
      suppressed: number[];
      offsets: Map<number, number[]>;
      count: number;
    }
  >();
  checkMskRecords(records);
  for (const list of Object.values(records)) {
    for (const record of list) {
      const fated = fate(record);
      if (fated === 'failed') continue;
      const stream = headerText(record, 'tally.stream') ?? '';
      const seq = Number(headerText(record, 'tally.seq'));
      const key = `${record.topic}\u0000${stream}`;
      const batch = batches.get(key) ?? {
        topic: record.topic,
        stream,
        seqs: [] as number[],
        suppressed: [] as number[],
        offsets: new Map<number, number[]>(),
        count: 0,
      };
      if (stream !== '' && Number.isSafeInteger(seq) && seq > 0)
        (fated === 'suppressed' ? batch.suppressed : batch.seqs).push(seq);
      const offsets = batch.offsets.get(record.partition) ?? [];
      offsets.push(record.offset);
      batch.offsets.set(record.partition, offsets);
      batch.count++;
      batches.set(key, batch);
    }
  }
  return [...batches.values()].map((b) => ({
    group,
    stream: b.stream,
    topic: b.topic,
    seqs: toRuns(b.seqs),
    ...(b.suppressed.length > 0 && { suppressed: toRuns(b.suppressed) }),
    offsets: [...b.offsets].flatMap(([partition, offsets]) =>
      toRuns(offsets).map(([from, to]): OffsetRun => [partition, from, to]),
    ),
    count: b.count,
  }));
}
