import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { AuditReport, LinkedFindings } from '../../functions/core/audit/ports.js';
import { type KafkaBroker, startKafkaBroker } from '../../infra/local/kafka-broker.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import { waitForKafka } from '../../infra/local/readiness.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { headerText, loadHandlers, readBack, totalRecords } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { expectOneFateEach, seqFates } from '../helpers/seq-fates.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 8: the broker is killed (SIGKILL, like a crashed host) and restarted on the same log dir
// while a batch of several thousand records is on its way to it. Every record must come back in
// the answer with an outcome, the audit must settle every UNKNOWN from the log (landed → ACKED at
// its offset, absent → NOT_SENT), and the log must then hold exactly what the ledger says was
// written. The broker is this file's own (killing the shared one would break other files);
// DynamoDB is the shared one, with tables of this file's own.
// Both ways publish runs: ledger first (TALLY_AUDIT_HORIZON_SECONDS=0, no leases) and the default
// fast path (a 5-minute horizon, seqs leased per container, no ledger write before the send). On
// the fast path the audit, within the horizon, settles what landed and leaves what is absent
// UNKNOWN (named in `unknownAbsent`: its request may still be sending it), and a lease's unused
// rest stays a hole; the retry with the key sends those records again under the same seqs.

const RECORDS = 5000;
const OUTCOMES = ['ACKED', 'FAILED', 'NOT_SENT', 'UNKNOWN'] as const;
type Outcome = (typeof OUTCOMES)[number];
type Counts = Record<Outcome, number>;

interface Report {
  readonly id: string;
  readonly error_code: number;
  readonly seq: number;
  readonly outcome?: string;
  readonly partition_id?: number;
  readonly offset?: number;
}

interface LedgerRecord {
  readonly seq: number;
  readonly outcome: Outcome;
  readonly partition_id?: number;
  readonly offset?: number;
}

const entries = Array.from({ length: RECORDS }, (_, i) => ({
  id: `r${i}`,
  key: { type: 'STRING', data: `order-${i % 97}` },
  value: { type: 'STRING', data: `${i}:${'x'.repeat(200)}` },
}));
const ids = entries.map((e) => e.id);

const outcomeOf = (report: Report): Outcome =>
  report.error_code === 200 ? 'ACKED' : (report.outcome as Outcome);

function count(outcomes: Iterable<Outcome>): Counts {
  const counts: Counts = { ACKED: 0, FAILED: 0, NOT_SENT: 0, UNKNOWN: 0 };
  for (const outcome of outcomes) counts[outcome]++;
  return counts;
}

const show = (counts: Counts) => OUTCOMES.map((o) => `${o} ${counts[o]}`).join(' ');

/** Every report of a 207 batch answer, by entry id; fails unless each entry is there once. */
function reportsOf(response: { statusCode: number; body: string }, expected: readonly string[]) {
  expect(response.statusCode, response.body.slice(0, 300)).toBe(207);
  const body = JSON.parse(response.body) as { successes: Report[]; failures: Report[] };
  const all = [...body.successes, ...body.failures];
  expect(all).toHaveLength(expected.length);
  const byId = new Map(all.map((r) => [r.id, r]));
  expect([...byId.keys()].sort()).toEqual([...expected].sort());
  for (const report of body.successes) {
    expect(report).toMatchObject({ error_code: 200, seq: expect.any(Number) });
    expect(report.offset).toBeTypeOf('number');
  }
  for (const report of body.failures) {
    expect(['FAILED', 'NOT_SENT', 'UNKNOWN'], JSON.stringify(report)).toContain(report.outcome);
    expect(report.seq).toBeTypeOf('number');
  }
  return byId;
}

/** Every seq of some ranges, in order. */
const seqsOf = (ranges: ReadonlyArray<readonly [number, number]>) =>
  ranges.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ['ledger first', true],
  ['on the default fast path', false],
])(
  'broker killed and restarted during a large batch publish, %s',
  (_mode, ledgerFirst: boolean) => {
    const workDir = mkdtempSync(join(tmpdir(), 'tally-restart-'));
    let broker: KafkaBroker;
    let restarting: Promise<void> | undefined;
    let paused: number | undefined;
    let kafka: Kafka;
    let admin: Admin;
    let clusterId: string;
    let api: Awaited<ReturnType<typeof loadHandlers>>;
    let env: Record<string, string>;
    let documents: DynamoDBDocumentClient;

    const batch = (topic: string, headers: Record<string, string>, records = entries) =>
      api.batch(
        httpEvent({
          pathParameters: { cluster_id: clusterId, topic_name: topic },
          headers,
          body: JSON.stringify({ entries: records }),
        }),
      );
    const lookup = (query: Record<string, string>) =>
      api.lookup(httpEvent({ pathParameters: { cluster_id: clusterId }, query }));
    const ledgerOf = async (key: string) => {
      const found = await lookup({ idempotency_key: key });
      expect(found.statusCode, found.body.slice(0, 300)).toBe(200);
      return JSON.parse(found.body).records as LedgerRecord[];
    };

    /**
     * Until the broker serves what the functions use: metadata, a leader for every partition of
     * `topic` (ListOffsets), and the group coordinator (the audit reads with a consumer group; these
     * probe groups spread over the partitions of __consumer_offsets).
     */
    const serving = async (topic: string) => {
      await waitForKafka(broker.bootstrap, { timeoutMs: 90_000 });
      const probes = Array.from({ length: 20 }, (_, i) => `tally-probe-${i}`);
      const deadline = Date.now() + 60_000;
      for (;;) {
        try {
          await totalRecords(admin, topic);
          await admin.describeGroups(probes);
          return;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await sleep(250);
        }
      }
    };

    /** Restarts the broker (SIGKILL now); `back` resolves once it serves again, with the time. */
    const restart = () => {
      const killedAt = performance.now();
      restarting = broker.restart();
      return {
        back: async (topic: string) => {
          await restarting;
          await serving(topic);
          return Math.round(performance.now() - killedAt);
        },
      };
    };

    /** A topic with 3 partitions, and a warm container that has published to it. */
    const prepare = async (purpose: string) => {
      const topic = uniqueName(purpose);
      await createTopicsEverywhere(admin, [{ topic, numPartitions: 3 }]);
      await serving(topic); // as in any cluster in use, the group coordinator runs before the fault
      const warm = reportsOf(await batch(topic, {}, entries.slice(0, 3)), ['r0', 'r1', 'r2']);
      expect([...warm.values()].map(outcomeOf)).toEqual(['ACKED', 'ACKED', 'ACKED']);
      const firstSeq = Math.max(...[...warm.values()].map((r) => r.seq)) + 1;
      return { topic, from: { firstSeq, inLog: 3 } };
    };

    /**
     * Whether the batch with `key` is on its way to the broker. Ledger first: the ledger holds its
     * first seq as UNKNOWN (the block written just before the send; again with the outcomes after
     * it). On the fast path nothing is written to the ledger before the send: the key's claim is
     * the request's last write before it.
     */
    const onItsWay = async (topic: string, key: string, firstSeq: number) => {
      if (!ledgerFirst) {
        const { Items } = await documents.send(
          new ScanCommand({ TableName: env.TALLY_RESERVATIONS_TABLE, ConsistentRead: true }),
        );
        return Items?.some((item) => String(item.idempotencyKey).includes(key)) ?? false;
      }
      const found = await lookup({ stream: topic, seq: String(firstSeq) });
      if (found.statusCode !== 200) return false;
      const [record] = JSON.parse(found.body).records as LedgerRecord[];
      return record?.outcome === 'UNKNOWN';
    };

    /**
     * Publishes the batch and calls `fault` the moment it is on its way (`onItsWay`), in the same
     * turn as the check that no answer came yet. A batch answered before the fault could come is
     * noticed, and another one is sent (3 at most). With `undo`, a batch the fault came too late
     * for (every record acknowledged: at load the broker's answer can be on its way when the
     * fault lands) counts as one answered before it: the fault is undone and another one sent.
     */
    const publishWith = async (
      topic: string,
      from: { readonly firstSeq: number; readonly inLog: number },
      timeoutMs: number,
      fault: () => void,
      undo?: () => void,
    ) => {
      let { firstSeq, inLog } = from;
      for (let attempt = 1; ; attempt++) {
        const key = uniqueName('batch');
        const headers = { 'Idempotency-Key': key, 'Tally-Timeout-Ms': String(timeoutMs) };
        const started = performance.now();
        let answeredAt: number | undefined;
        const publishing = batch(topic, headers).then((response) => {
          answeredAt = performance.now();
          return response;
        });
        let faulted = false;
        while (answeredAt === undefined) {
          if (!(await onItsWay(topic, key, firstSeq))) continue;
          if (answeredAt === undefined) {
            fault();
            faulted = true;
          }
          break;
        }
        const reports = reportsOf(await publishing, ids);
        // Seqs are dense and in entry order, each once.
        entries.forEach((entry, i) => {
          expect(reports.get(entry.id)?.seq).toBe(firstSeq + i);
        });
        batchFrom.set(topic, firstSeq);
        const latencyMs = Math.round((answeredAt as number) - started);
        expect(latencyMs).toBeLessThan(timeoutMs + 5000);
        const acked = count([...reports.values()].map(outcomeOf)).ACKED;
        const tooLate = faulted && undo !== undefined && acked === RECORDS;
        if (tooLate) undo();
        else if (faulted) return { key, headers, reports, latencyMs, firstSeq, inLog, attempt };
        expect(attempt, 'a batch answered before the fault could come').toBeLessThan(3);
        expect(count([...reports.values()].map(outcomeOf)).ACKED).toBe(RECORDS);
        firstSeq += RECORDS;
        inLog += RECORDS;
      }
    };

    const auditTopic = async (topic: string) => {
      const task = (await import('../../functions/audit/task-handler.js')).handler;
      const read = (await import('../../functions/audit/read-handler.js')).handler;
      const { audits } = (await task({ topic }, lambdaContext(60_000))) as {
        audits: Array<{ auditId: string; settled: { landed: number; notWritten: number } }>;
      };
      const [summary] = audits;
      const stored = await read(
        httpEvent({ pathParameters: { cluster_id: clusterId, audit_id: summary?.auditId ?? '' } }),
        lambdaContext(),
      );
      expect(stored.statusCode, stored.body).toBe(200);
      const report = JSON.parse(stored.body ?? '{}') as AuditReport;
      expect(report.complete).toBe(true);
      const findings = report.streams.find((s) => s.stream === topic) as LinkedFindings;
      expect(findings.lost).toEqual([]);
      if (ledgerFirst) {
        // No unexplained hole: every seq up to the stream's counter has exactly one fate.
        await expectOneFateEach(inject('dynamodbEndpoint'), topic);
        expect(findings.unrecorded).toEqual([]);
      } else {
        // Every seq of the batch has one fate and no seq two; the seqs without one are a lease's
        // unused rest, holes the audit leaves unrecorded within the horizon (never VOID early).
        const { fates } = await seqFates(inject('dynamodbEndpoint'), topic);
        expect(fates.filter((f) => f.length > 1)).toEqual([]);
        const holes = fates.flatMap((f, i) => (f.length === 0 ? [i + 1] : []));
        expect(seqsOf(findings.unrecorded ?? [])).toEqual(holes);
        const batch = batchFrom.get(topic) as number;
        expect(holes.filter((seq) => seq >= batch && seq < batch + RECORDS)).toEqual([]);
      }
      return { settled: summary?.settled ?? { landed: -1, notWritten: -1 }, findings };
    };
    /** Per topic, the first seq of the batch the fault hit. */
    const batchFrom = new Map<string, number>();

    /**
     * Reads the log back on its own: it holds exactly the batch's seqs the ledger says were
     * written, each at the offset the ledger names; a seq found more than once is a duplicate the
     * audit names with every copy.
     */
    const checkLog = async (
      topic: string,
      firstSeq: number,
      ledger: readonly LedgerRecord[],
      findings: LinkedFindings,
    ) => {
      const total = await totalRecords(admin, topic);
      const records = await readBack(topic, total, 30_000, kafka);
      const copies = new Map<number, Array<{ partition: number; offset: number }>>();
      for (const record of records) {
        expect(headerText(record.headers, 'tally.stream')).toBe(topic);
        const seq = Number(headerText(record.headers, 'tally.seq'));
        copies.set(seq, [
          ...(copies.get(seq) ?? []),
          { partition: record.partition, offset: Number(record.offset) },
        ]);
      }
      const acked = ledger.filter((r) => r.outcome === 'ACKED');
      const inLog = [...copies.keys()].filter((seq) => seq >= firstSeq).sort((a, b) => a - b);
      expect(inLog).toEqual(acked.map((r) => r.seq));
      for (const record of acked) {
        expect(copies.get(record.seq)).toContainEqual({
          partition: record.partition_id,
          offset: record.offset,
        });
      }
      const repeated = [...copies].filter(([, list]) => list.length > 1);
      const named = new Map(findings.producerDuplicates.map((d) => [d.seq, d]));
      for (const [seq, list] of repeated) {
        const duplicate = named.get(seq);
        expect(duplicate?.times, `seq ${seq} is in the log ${list.length} times`).toBe(list.length);
        expect(duplicate?.copies.map(({ partition, offset }) => ({ partition, offset }))).toEqual(
          expect.arrayContaining(list),
        );
      }
      expect(named.size).toBe(repeated.length);
      const extra = repeated.reduce((sum, [, list]) => sum + list.length - 1, 0);
      return { total, duplicates: repeated.length, extra };
    };

    /**
     * After the broker is back: the ledger agrees with the answer, one audit settles every UNKNOWN
     * and the log matches the ledger; a retry with the Idempotency-Key sends again only what was
     * not written, under the same seqs, and a second audit finds every record once.
     */
    const settleAndRetry = async (topic: string, sent: Awaited<ReturnType<typeof publishWith>>) => {
      const { key, headers, reports, firstSeq } = sent;
      const ledgerBefore = await ledgerOf(key);
      expect(ledgerBefore).toHaveLength(RECORDS);
      ledgerBefore.forEach((record, i) => {
        expect(record.seq).toBe(firstSeq + i);
        // What the ledger says is the answer, or still UNKNOWN where the outcomes could not be
        // recorded: never a different definite outcome.
        if (record.outcome !== 'UNKNOWN') {
          expect(record.outcome).toBe(outcomeOf(reports.get(`r${i}`) as Report));
        }
      });
      const unknownBefore = ledgerBefore.filter((r) => r.outcome === 'UNKNOWN').length;

      const first = await auditTopic(topic);
      const settled = await ledgerOf(key);
      const counts = count(settled.map((r) => r.outcome));
      const ackedBefore = count(ledgerBefore.map((r) => r.outcome)).ACKED;
      expect(counts.ACKED).toBe(ackedBefore + first.settled.landed);
      if (ledgerFirst) {
        expect(first.settled.landed + first.settled.notWritten).toBe(unknownBefore);
        expect(counts.UNKNOWN).toBe(0);
      } else {
        // Within the horizon: landed settled, absent left UNKNOWN and named as absent.
        expect(first.settled.notWritten).toBe(0);
        expect(counts.UNKNOWN).toBe(unknownBefore - first.settled.landed);
        // The report names the newest LIST_CAP ranges and counts the older ones (`leftOff`): a
        // batch partly landed when the broker was killed leaves many short ranges.
        const absent = settled.filter((r) => r.outcome === 'UNKNOWN').map((r) => r.seq);
        const listed = seqsOf(first.findings.unknownAbsent);
        expect(listed).toEqual(absent.slice(absent.length - listed.length));
        const ranges = absent.filter((seq, i) => i === 0 || seq !== (absent[i - 1] ?? 0) + 1);
        expect(
          first.findings.unknownAbsent.length + (first.findings.leftOff?.unknownAbsent ?? 0),
        ).toBe(ranges.length);
      }
      settled.forEach((record, i) => {
        const reported = reports.get(`r${i}`) as Report;
        if (reported.error_code === 200) {
          // Acknowledged to the client: still there, at the same place, after an unclean restart.
          expect(record).toMatchObject({
            outcome: 'ACKED',
            partition_id: reported.partition_id,
            offset: reported.offset,
          });
        }
      });
      const log = await checkLog(topic, firstSeq, settled, first.findings);
      // The audit's figures are what an independent reader of the log finds: the batch's records
      // there are the ones acknowledged before it plus those it settled as landed (the rest not
      // written), whatever the timing made them (case (a) has shown 0 landed so far).
      expect(log.total - sent.inLog - log.extra).toBe(ackedBefore + first.settled.landed);
      // The rest of the batch is not in the log: NOT_SENT (answered so, or settled by the audit
      // ledger first) or, on the fast path within the horizon, still UNKNOWN.
      expect(counts.NOT_SENT + counts.FAILED + counts.UNKNOWN).toBe(
        RECORDS - ackedBefore - first.settled.landed,
      );
      expect(counts.FAILED, 'a broker that was killed refused nothing').toBe(0);

      const retry = reportsOf(await batch(topic, headers), ids);
      expect(count([...retry.values()].map(outcomeOf)).ACKED).toBe(RECORDS);
      entries.forEach((entry, i) => {
        const before = settled[i] as LedgerRecord;
        expect(retry.get(entry.id)?.seq).toBe(firstSeq + i);
        if (before.outcome === 'ACKED') {
          expect(retry.get(entry.id)).toMatchObject({
            partition_id: before.partition_id,
            offset: before.offset,
          });
        }
      });
      const second = await auditTopic(topic);
      expect(second.findings.unknownAbsent).toEqual([]);
      const final = await ledgerOf(key);
      expect(count(final.map((r) => r.outcome)).ACKED).toBe(RECORDS);
      const finalLog = await checkLog(topic, firstSeq, final, second.findings);
      expect(finalLog.total).toBe(sent.inLog + RECORDS + finalLog.extra);
      return { unknownBefore, settled: first.settled, counts, log, finalLog };
    };

    beforeAll(async () => {
      broker = await startKafkaBroker(workDir);
      clusterId = await waitForKafka(broker.bootstrap, { timeoutMs: 90_000 });
      delete process.env.TALLY_AUDIT_HORIZON_SECONDS;
      env = await usePublishEnv({
        KAFKA_BROKERS: broker.bootstrap,
        TALLY_MAX_BATCH_ENTRIES: String(RECORDS),
        ...(ledgerFirst && { TALLY_AUDIT_HORIZON_SECONDS: '0' }),
        POWERTOOLS_METRICS_DISABLED: 'true',
      });
      documents = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
      kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
      admin = kafka.admin();
      await admin.connect();
      vi.resetModules();
      api = await loadHandlers();
    });

    afterAll(async () => {
      if (paused !== undefined) process.kill(paused, 'SIGCONT');
      await restarting?.catch(() => {});
      await admin?.disconnect().catch(() => {});
      await broker?.process.stop();
      documents?.destroy();
      rmSync(workDir, { recursive: true, force: true });
    });

    it('killed as the batch is sent: every record answered, UNKNOWN settled, retry fills the gaps', async () => {
      const { topic, from } = await prepare('killed');
      let restarted: ReturnType<typeof restart> | undefined;
      const sent = await publishWith(topic, from, 8000, () => {
        restarted = restart();
      });
      const answered = count([...sent.reports.values()].map(outcomeOf));
      const restartMs = await (restarted as ReturnType<typeof restart>).back(topic);
      const result = await settleAndRetry(topic, sent);
      console.info(
        `broker killed mid-batch (attempt ${sent.attempt}): ${RECORDS} records answered in ${sent.latencyMs} ms (deadline 8000): ${show(answered)}; ` +
          `broker back in ${restartMs} ms; ledger UNKNOWN ${result.unknownBefore} → audit landed ${result.settled.landed}, not written ${result.settled.notWritten}; ` +
          `log ${result.log.total} records (${result.log.duplicates} duplicated seqs); after the retry ${result.finalLog.total} (${result.finalLog.duplicates} duplicated)`,
      );
    });

    it('stalls as the batch is sent, writes it after the deadline, and is killed as it writes', async () => {
      const { topic, from } = await prepare('stalled');
      const sent = await publishWith(
        topic,
        from,
        3000,
        () => {
          paused = broker.process.pid;
          process.kill(paused, 'SIGSTOP');
        },
        () => {
          process.kill(paused as number, 'SIGCONT');
          paused = undefined;
        },
      );
      const answered = count([...sent.reports.values()].map(outcomeOf));
      // Sent, never answered: the request's deadline came first. At load a part of the batch
      // (a produce request of its own) can be acknowledged before the stop lands: those are
      // ACKED and in the log, the rest UNKNOWN; nothing else.
      expect(answered.UNKNOWN).toBeGreaterThan(0);
      expect(answered.UNKNOWN + answered.ACKED).toBe(RECORDS);
      process.kill(paused as number, 'SIGCONT');
      paused = undefined;
      // The broker reads the request it was sent, writes the batch, and is killed the moment the
      // first of it lands.
      const answeredInLog = sent.inLog + answered.ACKED;
      const waitUntil = Date.now() + 15_000;
      let inLog = answeredInLog;
      while (inLog === answeredInLog && Date.now() < waitUntil)
        inLog = await totalRecords(admin, topic);
      const restartMs = await restart().back(topic);
      const landedBeforeKill = inLog - answeredInLog;
      expect(
        landedBeforeKill,
        'the broker wrote part of the batch after the deadline',
      ).toBeGreaterThan(0);
      const result = await settleAndRetry(topic, sent);
      // What the broker had written survives its crash, and the audit finds every record of it.
      expect(result.settled.landed).toBeGreaterThanOrEqual(landedBeforeKill);
      console.info(
        `broker stalled mid-batch (attempt ${sent.attempt}): ${RECORDS} records answered in ${sent.latencyMs} ms (deadline 3000): ${show(answered)}; ` +
          `${landedBeforeKill} landed when it was killed; broker back in ${restartMs} ms; ledger UNKNOWN ${result.unknownBefore} → audit landed ${result.settled.landed}, not written ${result.settled.notWritten}; ` +
          `log ${result.log.total} records (${result.log.duplicates} duplicated seqs); after the retry ${result.finalLog.total} (${result.finalLog.duplicates} duplicated)`,
      );
    });
  },
);
