import { gzipSync } from 'node:zlib';
import { createAuditor } from '../../functions/core/audit/auditor.js';
import { partitionGroups } from '../../functions/core/audit/merge-slices.js';
import type {
  AuditPorts,
  AuditReport,
  ScannedRecord,
  SliceJson,
} from '../../functions/core/audit/ports.js';
import { CheckpointTooLargeError } from '../../functions/core/audit/retention.js';
import { scanSlice } from '../../functions/core/audit/scan-slice.js';
import type { SeqRange } from '../../functions/core/audit/seq-ranges.js';
import type { CheckpointJson } from '../../functions/core/audit/topic-log.js';
import type { LedgerBlock } from '../../functions/core/publish/ports.js';
import type { RecordOutcome } from '../../functions/core/shared/outcomes.js';
import { scanRefusedAfter } from './scan-after.js';

// A topic's life under scheduled audits, on fake ports and a simulated clock: steady traffic on
// several streams, an audit every interval, and planted findings. Used by the long-horizon unit
// test (little traffic) and bench/audit-horizon.ts (the traffic). The fakes hold what
// the real stores would; to keep 17,280 runs affordable, the ledger merges each 3 hours' blocks
// into one 3 hours later, and each day's into one after 8 days (the audit reads the same
// outcomes, in full, on every run).

export const DAY = 86_400_000;
export const MINUTE = 60_000;

export type PlantKind = 'producerDuplicate' | 'lost' | 'redelivery';

export interface Plant {
  /** The audit run before which it happens (its findings must be in that run's report). */
  readonly run: number;
  readonly stream: number;
  readonly kind: PlantKind;
}

/**
 * On each of `days`, in runs of 15 minutes: a producer duplicate at run 7, a loss at run 31 and a
 * redelivery at run 60, each on its own stream (of 10), turning with the day.
 */
export function plantsOn(days: readonly number[]): Plant[] {
  const runsADay = DAY / (15 * MINUTE);
  return days.flatMap((day, i) => [
    { run: day * runsADay + 7, stream: i % 10, kind: 'producerDuplicate' as const },
    { run: day * runsADay + 31, stream: (i + 3) % 10, kind: 'lost' as const },
    { run: day * runsADay + 60, stream: (i + 6) % 10, kind: 'redelivery' as const },
  ]);
}

export interface SimulationOptions {
  readonly streams: number;
  readonly days: number;
  readonly auditEveryMs: number;
  /** Records each stream publishes between two audits. */
  readonly recordsPerRun: number;
  readonly bucketMs: number;
  /** Passed as the request's retentionMs when set (the code before it had none). */
  readonly retentionMs?: number;
  readonly plants?: readonly Plant[];
  /** The fake store refuses a larger checkpoint (gzipped) as the real one does over 380 KB. */
  readonly checkpointLimitBytes?: number;
  /** The topic's retention: older records leave the log (default 7 days, Kafka's). */
  readonly logRetentionMs?: number;
  /** The fake ledger lists changed blocks (default true): runs read only those. */
  readonly incremental?: boolean;
  /**
   * Each run as the fan-out audit does it (functions/audit/fan-out-*.ts): one child per
   * `perChild` partitions reads its slice, then the merge absorbs the slices and compares.
   */
  readonly fanOut?: { readonly perChild: number };
  /** Called after every run; throw to stop. */
  readonly afterRun?: (run: RunFacts) => void;
}

export interface RunFacts {
  readonly run: number;
  readonly day: number;
  readonly report: AuditReport;
  /** The checkpoint as the store writes it: gzipped JSON. */
  readonly checkpointBytes: number;
  readonly reportBytes: number;
  /** With `fanOut`: the largest slice this run saved, gzipped as the store writes it. */
  readonly sliceBytes: number;
  /** Plants of this run the report does not show. */
  readonly missed: readonly Plant[];
  /** Findings the report names that nothing planted: `kind stream/seq`. */
  readonly unexpected: readonly string[];
}

export interface SimulationResult {
  readonly runs: number;
  readonly maxCheckpointBytes: number;
  readonly maxReportBytes: number;
  readonly maxSliceBytes: number;
  /** Day → checkpoint bytes after that day's last run. */
  readonly checkpointBytesAfterDay: Readonly<Record<number, number>>;
  readonly missed: readonly Plant[];
}

const T0 = Date.parse('2026-01-01T00:00:00Z');
const PARTITIONS = 3;
const GROUP = 'billing';
const MERGE_MS = 3 * 3_600_000;

interface Stored {
  partition: number;
  offset: number;
  record: ScannedRecord;
}

/** Runs the simulation; resolves with its figures (every run's facts go to `afterRun`). */
export async function simulate(options: SimulationOptions): Promise<SimulationResult> {
  let now = T0;
  const topic = 'orders';
  const names = Array.from({ length: options.streams }, (_, i) => `stream-${i}`);
  const log: Stored[][] = Array.from({ length: PARTITIONS }, () => []);
  /** Per partition, the offset of log[p][0]: records older than the retention are removed. */
  const logStart = log.map(() => 0);
  const logRetentionMs = options.logRetentionMs ?? 7 * DAY;
  const ledger = new Map<string, LedgerBlock[]>(names.map((n) => [n, []]));
  /** Receipts per stream as processed ranges, one per batch (adjacent batches merged). */
  const receipts = new Map<string, Array<[number, number]>>(names.map((n) => [n, []]));
  let checkpoint: { state: CheckpointJson; version: number } | undefined;
  let checkpointBytes = 0;

  const append = (stream: string, seq: number, session: string, at: number) => {
    const partition = names.indexOf(stream) % PARTITIONS;
    const records = log[partition] as Stored[];
    const offset = (logStart[partition] as number) + records.length;
    records.push({
      partition,
      offset,
      record: {
        partition,
        offset,
        timestamp: at,
        headers: { 'tally.stream': stream, 'tally.seq': String(seq), 'tally.session': session },
      },
    });
    return { partition, offset };
  };
  const receive = (stream: string, from: number, to: number) => {
    const runs = receipts.get(stream) as Array<[number, number]>;
    const last = runs[runs.length - 1];
    if (last !== undefined && last[1] + 1 === from) last[1] = to;
    else runs.push([from, to]);
  };

  /** When the audit rewrote a block (a merge is no change: the same outcomes). */
  const rewrittenAt = new WeakMap<LedgerBlock, number>();
  const ports: AuditPorts & { clock: () => number } = {
    clock: () => now,
    ledger: {
      async forEachBlock(stream, onBlock) {
        for (const block of ledger.get(stream) ?? []) onBlock(block);
      },
      ...(options.incremental !== false && {
        async forEachChangedBlock(stream, since, onBlock) {
          for (const block of ledger.get(stream) ?? [])
            if ((rewrittenAt.get(block) ?? block.writtenAt ?? 0) >= since) onBlock(block);
        },
      }),
      async find(stream, seq) {
        return ledger
          .get(stream)
          ?.find((b) => seq >= b.firstSeq && seq < b.firstSeq + b.outcomes.length);
      },
      async write(block) {
        const blocks = ledger.get(block.stream) ?? [];
        const i = blocks.findIndex((b) => b.firstSeq === block.firstSeq);
        rewrittenAt.set(block, now);
        if (i >= 0) blocks[i] = block;
        return String(now); // nothing else writes here: every settling lands
      },
    },
    log: {
      async scan(_topic, request, onRecord) {
        const refused = await scanRefusedAfter(request);
        if (refused) return refused;
        let scanned = 0;
        const next = new Map<number, number>();
        const starts = new Map<number, number>();
        for (let partition = 0; partition < PARTITIONS; partition++) {
          const records = log[partition] as Stored[];
          const low = logStart[partition] as number;
          if (request.until && !request.until.has(partition)) continue;
          const high = low + records.length;
          const end = Math.min(high, request.until?.get(partition) ?? high);
          starts.set(partition, low);
          let offset = Math.max(low, request.from?.get(partition) ?? low);
          for (; offset < end; offset++) {
            onRecord((records[offset - low] as Stored).record);
            scanned++;
          }
          next.set(partition, offset);
        }
        return { scanned, next, logStart: starts, complete: true };
      },
    },
    receipts: {
      async forEachBatch(group, stream, onBatch) {
        if (group !== GROUP) return;
        for (const run of receipts.get(stream) ?? []) onBatch({ seqs: [run as SeqRange] });
      },
      async counts() {
        return [];
      },
    },
    checkpoints: {
      async load() {
        return checkpoint;
      },
      async save(_topic, state, version) {
        if ((checkpoint?.version ?? 0) !== version) throw new Error('checkpoint conflict');
        const json = JSON.stringify(state);
        const bytes = gzipSync(json).length;
        const limit = options.checkpointLimitBytes ?? Number.POSITIVE_INFINITY;
        if (bytes > limit) throw new CheckpointTooLargeError(topic, bytes, limit);
        checkpointBytes = bytes;
        // toJSON() builds a fresh object each time: nothing of the run's state is shared with it.
        checkpoint = { state, version: version + 1 };
      },
    },
  };

  const slices = new Map<string, { state: SliceJson; version: number }>();
  let sliceBytes = 0;
  const slicePorts = {
    async load(_topic: string, slice: string) {
      return slices.get(slice);
    },
    async save(_topic: string, slice: string, state: SliceJson, version: number) {
      if ((slices.get(slice)?.version ?? 0) !== version) throw new Error('slice conflict');
      sliceBytes = Math.max(sliceBytes, gzipSync(JSON.stringify(state)).length);
      slices.set(slice, { state, version: version + 1 });
    },
  };
  const children = options.fanOut ? partitionGroups(PARTITIONS, options.fanOut.perChild) : [];
  const auditor = createAuditor({ ...ports, slices: slicePorts });
  const runs = Math.round((options.days * DAY) / options.auditEveryMs);
  const seqs = names.map(() => 0);
  const plantsByRun = new Map<number, Plant[]>();
  for (const plant of options.plants ?? []) {
    plantsByRun.set(plant.run, [...(plantsByRun.get(plant.run) ?? []), plant]);
  }
  const afterDay: Record<number, number> = {};
  const missed: Plant[] = [];
  /** `kind stream/seq` of every plant so far: what a report may name. */
  const plantedSoFar = new Set<string>();
  let maxCheckpointBytes = 0;
  let maxReportBytes = 0;
  let maxSliceBytes = 0;

  for (let run = 1; run <= runs; run++) {
    const from = now;
    now = T0 + run * options.auditEveryMs;
    const planted = plantsByRun.get(run) ?? [];
    const expectations: Array<{ plant: Plant; stream: string; seq: number }> = [];
    names.forEach((stream, s) => {
      const firstSeq = (seqs[s] as number) + 1;
      const outcomes: RecordOutcome[] = [];
      const mine = planted.filter((p) => p.stream === s);
      for (let i = 0; i < options.recordsPerRun; i++) {
        const seq = firstSeq + i;
        const at =
          from + Math.floor(((i + 1) * options.auditEveryMs) / (options.recordsPerRun + 1));
        // The middle record of the run is the one a plant changes.
        const plant = i === options.recordsPerRun >> 1 ? mine.shift() : undefined;
        if (plant) {
          expectations.push({ plant, stream, seq });
          plantedSoFar.add(`${plant.kind} ${stream}/${seq}`);
        }
        if (plant?.kind === 'lost') {
          outcomes.push({ status: 'ACKED', partition: s % PARTITIONS, offset: '999999999' });
          continue;
        }
        const placed = append(stream, seq, `session-${s}-${run}`, at);
        outcomes.push({
          status: 'ACKED',
          partition: placed.partition,
          offset: String(placed.offset),
        });
        receive(stream, seq, seq);
        if (plant?.kind === 'producerDuplicate') {
          append(stream, seq, `session-${s}-${run}-retry`, at + 1000);
          receive(stream, seq, seq);
        }
        if (plant?.kind === 'redelivery') receive(stream, seq, seq);
      }
      seqs[s] = firstSeq + options.recordsPerRun - 1;
      const blocks = ledger.get(stream) as LedgerBlock[];
      blocks.push({
        stream,
        firstSeq,
        topic,
        session: `session-${s}-${run}`,
        idempotencyKey: undefined,
        outcomes,
        writtenAt: now - 1000,
      });
    });
    // Blocks of 3 hours become one 3 hours later: fewer items for each run to pass over (the
    // ledger is read in full), the same outcomes; the rows a report lists (2 hours) keep theirs.
    if ((now - T0) % MERGE_MS === 0 && now - T0 >= 2 * MERGE_MS)
      mergeBlocks(ledger, now - 2 * MERGE_MS, now - MERGE_MS);
    // And a day's become one past the retention horizon (8 days), where runs only pass them over.
    if ((now - T0) % DAY === 0 && now - T0 >= 9 * DAY)
      mergeBlocks(ledger, now - 9 * DAY, now - 8 * DAY);
    if ((now - T0) % DAY === 0) {
      log.forEach((records, partition) => {
        const kept = records.findIndex((r) => r.record.timestamp >= now - logRetentionMs);
        const removed = kept < 0 ? records.length : kept;
        records.splice(0, removed);
        logStart[partition] = (logStart[partition] as number) + removed;
      });
    }

    sliceBytes = 0;
    for (const child of children)
      await scanSlice(
        { ...ports, slices: slicePorts },
        { topic, ...child, scanDeadlineAt: now + MINUTE, bucketMs: options.bucketMs },
      );
    const report = await auditor.run({
      ...(options.fanOut && { fanOut: { slices: children.map((c) => c.slice) } }),
      topic,
      groups: [GROUP],
      streams: names,
      scanDeadlineAt: now + MINUTE,
      horizonMs: 5 * MINUTE,
      bucketMs: options.bucketMs,
      ...(options.retentionMs === undefined ? {} : { retentionMs: options.retentionMs }),
    });
    const runMissed = expectations.filter((e) => !reported(report, e)).map((e) => e.plant);
    missed.push(...runMissed);
    const reportBytes = JSON.stringify(report).length;
    maxCheckpointBytes = Math.max(maxCheckpointBytes, checkpointBytes);
    maxReportBytes = Math.max(maxReportBytes, reportBytes);
    maxSliceBytes = Math.max(maxSliceBytes, sliceBytes);
    const day = (now - T0) / DAY;
    if (Number.isInteger(day)) afterDay[day] = checkpointBytes;
    const unexpected = named(report).filter((finding) => !plantedSoFar.has(finding));
    options.afterRun?.({
      run,
      day,
      report,
      checkpointBytes,
      reportBytes,
      sliceBytes,
      missed: runMissed,
      unexpected,
    });
  }
  return {
    runs,
    maxCheckpointBytes,
    maxReportBytes,
    maxSliceBytes,
    checkpointBytesAfterDay: afterDay,
    missed,
  };
}

/** Every seq the report names as a duplicate, lost or redelivered, as `kind stream/seq`. */
function named(report: AuditReport): string[] {
  const seqs = (r: { from: number; to: number }) =>
    Array.from({ length: r.to - r.from + 1 }, (_, i) => r.from + i);
  return report.streams.flatMap((s) => [
    ...s.producerDuplicates.map((d) => `producerDuplicate ${s.stream}/${d.seq}`),
    ...s.lost.flatMap(seqs).map((seq) => `lost ${s.stream}/${seq}`),
    ...s.consumerDuplicates.flatMap(seqs).map((seq) => `redelivery ${s.stream}/${seq}`),
  ]);
}

/** Whether the report names a plant: the seq as a duplicate, lost, or redelivered. */
function reported(
  report: AuditReport,
  { plant, stream, seq }: { plant: Plant; stream: string; seq: number },
): boolean {
  const findings = report.streams.find((s) => s.stream === stream);
  if (findings === undefined) return false;
  const within = (r: { from: number; to: number }) => seq >= r.from && seq <= r.to;
  switch (plant.kind) {
    case 'producerDuplicate':
      return findings.producerDuplicates.some((d) => d.seq === seq && d.times === 2);
    case 'lost':
      return findings.lost.some(within);
    case 'redelivery':
      return findings.consumerDuplicates.some((d) => d.group === GROUP && within(d));
  }
}

/**
 * Merges each stream's blocks written in [from, until) into one block (they are contiguous in
 * seq and time): the same outcomes in fewer items, written at the last one's time.
 */
function mergeBlocks(ledger: Map<string, LedgerBlock[]>, from: number, until: number): void {
  for (const [stream, blocks] of ledger) {
    const inDay = (b: LedgerBlock) => (b.writtenAt ?? 0) >= from && (b.writtenAt ?? 0) < until;
    const first = blocks.findIndex(inDay);
    if (first < 0) continue;
    const day = blocks.filter(inDay);
    const last = day[day.length - 1] as LedgerBlock;
    const merged: LedgerBlock = {
      ...(day[0] as LedgerBlock),
      outcomes: day.flatMap((b) => b.outcomes),
      writtenAt: last.writtenAt ?? 0,
    };
    ledger.set(stream, [...blocks.slice(0, first), merged, ...blocks.slice(first + day.length)]);
  }
}
