import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAuditStore } from '../../functions/adapters/dynamodb/audit-store.js';
import { createLedger } from '../../functions/adapters/dynamodb/ledger.js';
import { createReceiptsStore } from '../../functions/adapters/dynamodb/receipts-store.js';
import { createStreamCounter } from '../../functions/adapters/dynamodb/sequence-allocator.js';
import { createLogScanner } from '../../functions/adapters/kafka/log-scanner.js';
import { createAuditor } from '../../functions/core/audit/auditor.js';
import type { AuditPorts, AuditReport } from '../../functions/core/audit/ports.js';
import type { CheckpointJson } from '../../functions/core/audit/topic-log.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import type { Invoke } from '../../infra/local/payload-limits.js';
import { createLocalStepFunctions, type Execution } from '../../infra/local/step-functions.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import {
  createTopic,
  headerText,
  loadHandlers,
  produceEvent,
  readBack,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// The fan-out audit (infra/state-machines/audit-fan-out.asl.json) run by the local Step
// Functions runner, its Distributed Map's children and merge calling our handlers, on a
// 32-partition topic of the real local broker: its stored report must equal what one sequential
// audit of the same data reports — with cross-partition duplicates, UNKNOWN outcomes landed and
// absent, records lost from the log, and a group that processed records twice.

const PARTITIONS = 32;
const RECORDS = 194;

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

describe('audit fan-out (Distributed Map)', () => {
  const kafka = testKafka('tally-test-audit-fan-out');
  const admin: Admin = kafka.admin();
  let env: Record<string, string>;
  let api: Awaited<ReturnType<typeof loadHandlers>>;
  let documents: DynamoDBDocumentClient;
  let tasks: Record<string, Handler>;

  beforeAll(async () => {
    env = await usePublishEnv({ TALLY_AUDIT_HORIZON_SECONDS: '0' });
    await admin.connect();
    api = await loadHandlers();
    documents = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
    tasks = {
      fanOutPlan: (await import('../../functions/audit/fan-out-plan.js')).handler as Handler,
      fanOutChild: (await import('../../functions/audit/fan-out-child.js')).handler as Handler,
      fanOutMerge: (await import('../../functions/audit/fan-out-merge.js')).handler as Handler,
    };
  });
  afterAll(() => admin.disconnect());

  /** The state machine's tasks, called in this process as their Lambda would be (15 minutes). */
  const invoker =
    (
      calls: Array<[string, unknown]>,
      around?: (fn: string, payload: unknown, run: () => Promise<unknown>) => Promise<unknown>,
    ): Invoke =>
    async (fn, payload) => {
      const handler = tasks[fn];
      if (!handler) throw new Error(`no task ${fn}`);
      calls.push([fn, payload]);
      const run = () => handler(payload, lambdaContext(900_000));
      return around ? around(fn, payload, run) : run();
    };

  const publish = async (topic: string, count: number, from: number) => {
    const body = Array.from({ length: count }, (_, i) =>
      JSON.stringify({
        partition_id: (from + i) % PARTITIONS,
        value: { type: 'STRING', data: `v${from + i}` },
      }),
    ).join('');
    const response = await api.produce(produceEvent(topic, body));
    expect(response.statusCode, response.body).toBe(200);
  };

  /** A topic with every kind of finding, and a group that processed some records twice. */
  const scenario = async () => {
    const topic = await createTopic(admin, PARTITIONS);
    await publish(topic, 2, 0);
    for (let from = 2; from < RECORDS; from += 24) await publish(topic, 24, from);
    const records = await readBack(topic, RECORDS);
    const bySeq = new Map(records.map((r) => [Number(headerText(r.headers, 'tally.seq')), r]));
    // Copies by a new session, as a retry across a cold start would send them: most on another
    // partition (another child reads them), one on its own.
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (const [seq, shift] of [
      [5, 17],
      [40, 1],
      [100, 16],
      [7, 0],
    ] as const) {
      const record = bySeq.get(seq);
      await producer.send({
        topic,
        acks: -1,
        messages: [
          {
            partition: ((record?.partition ?? 0) + shift) % PARTITIONS,
            value: record?.value ?? null,
            headers: { ...record?.headers, 'tally.session': 's-retry' },
          },
        ],
      });
    }
    await producer.disconnect();
    // Seqs 1..2 UNKNOWN (in the log: landed); one past the last UNKNOWN and never sent.
    const ledger = createLedger(documents, env.TALLY_LEDGER_TABLE as string);
    const unknown = { status: 'UNKNOWN' as const, message: 'no answer in time' };
    const block = { stream: topic, topic, session: 's-x', idempotencyKey: undefined };
    await ledger.write({ ...block, firstSeq: 1, outcomes: [unknown, unknown] });
    await ledger.write({ ...block, firstSeq: RECORDS + 1, outcomes: [unknown] });
    // Two acknowledged records gone from partition 9 (the admin client learns the topic first).
    await admin.fetchTopicOffsets(topic);
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 9, offset: '2' }] });
    // A group that processed 1..60, then 30..60 again.
    const group = uniqueName('downstream');
    const { handler } = await import('../../functions/receipts/http-handler.js');
    for (const seqs of [[[1, 60]], [[30, 60]]]) {
      await handler(
        httpEvent({
          pathParameters: { cluster_id: inject('kafkaClusterId') },
          body: JSON.stringify({ group, stream: topic, seqs }),
        }),
        lambdaContext(),
      );
    }
    return { topic, group };
  };

  /**
   * One sequential audit of the whole topic on the same adapters, writing nothing: its own
   * checkpoint in memory, its ledger settlings counted but not stored (the fan-out settles them).
   */
  const sequentialReport = async (topic: string, group: string): Promise<AuditReport> => {
    const ledger = createLedger(documents, env.TALLY_LEDGER_TABLE as string);
    let checkpoint: { state: CheckpointJson; version: number } | undefined;
    const ports: AuditPorts = {
      ledger: {
        forEachBlock: (stream, onBlock) => ledger.forEachBlock(stream, onBlock),
        find: (stream, seq) => ledger.find(stream, seq),
        write: async () => 'not stored',
      },
      log: createLogScanner(kafka),
      receipts: createReceiptsStore(documents, env.TALLY_RECEIPTS_TABLE as string),
      checkpoints: {
        load: async () => checkpoint,
        save: async (_topic, state, version) => {
          checkpoint = { state, version: version + 1 };
        },
      },
      seqFates: {
        counter: createStreamCounter(documents, env.TALLY_STREAMS_TABLE as string),
        ledger: { void: async () => 0, fill: async () => false },
      },
    };
    return createAuditor(ports).run({
      topic,
      groups: [group],
      horizonMs: 0,
      bucketMs: 300_000,
      scanDeadlineAt: Date.now() + 120_000,
    });
  };

  /** A report without what differs between any two runs: when, and how long each phase took. */
  const comparable = (report: AuditReport) => {
    const { at: _at, timingsMs: _t, ...rest } = report as AuditReport & { auditId?: string };
    const { auditId: _id, ...same } = rest as typeof rest & { auditId?: string };
    return { ...same, checkpoint: [...same.checkpoint].sort((a, b) => a.partition - b.partition) };
  };

  const runFanOut = async (invoke: Invoke, topic: string, group: string) => {
    const sfn = createLocalStepFunctions({ invoke, retryIntervalMs: 200 });
    const started = sfn.start('audit-fan-out', { topic, groups: [group], partitionsPerChild: 4 });
    const done: Execution = await sfn.settled('audit-fan-out', started.name, 120_000);
    expect(done.status, `${done.error}: ${done.cause}`).toBe('SUCCEEDED');
    const { auditId } = done.output as { auditId: string };
    const stored = await createAuditStore(documents, env.TALLY_AUDITS_TABLE as string).get(auditId);
    expect(stored).toBeDefined();
    return { done, report: stored as AuditReport };
  };

  it('runs one child per 4 partitions and merges them into the report one sequential audit gives', async () => {
    const { topic, group } = await scenario();
    const sequential = await sequentialReport(topic, group);
    // The scenario shows in the sequential report: otherwise equality would prove little.
    const findings = sequential.streams.find((s) => s.stream === topic);
    expect(sequential.complete).toBe(true);
    expect(sequential.scanned).toBe(RECORDS - 2 + 4);
    expect(sequential.settled).toEqual({ landed: 2, notWritten: 1 });
    expect(findings?.producerDuplicates.map((d) => d.seq)).toEqual([5, 7, 40, 100]);
    expect(findings?.lost).toEqual([
      expect.objectContaining({ from: 10, to: 10 }),
      expect.objectContaining({ from: 42, to: 42 }),
    ]);
    // Seq 40 is in the log twice: its two deliveries are the producer's duplicate, not the group's.
    expect(findings?.consumerDuplicates).toEqual([
      expect.objectContaining({ group, from: 30, to: 39, times: 2 }),
      expect.objectContaining({ group, from: 41, to: 60, times: 2 }),
    ]);

    const calls: Array<[string, unknown]> = [];
    const { done, report } = await runFanOut(invoker(calls), topic, group);
    expect(calls.filter(([fn]) => fn === 'fanOutChild')).toHaveLength(PARTITIONS / 4);
    expect(done.history.find((e) => e.type === 'MapRunFinished')?.mapRun).toMatchObject({
      items: 8,
      succeeded: 8,
      failed: 0,
    });
    expect(comparable(report)).toEqual(comparable(sequential));

    // The settlings were stored: the lookup answers from the ledger.
    const lookup = await api.lookup(
      httpEvent({
        pathParameters: { cluster_id: inject('kafkaClusterId') },
        query: { stream: topic, seq: String(RECORDS + 1) },
      }),
    );
    expect(JSON.parse(lookup.body).records[0]).toMatchObject({ outcome: 'NOT_SENT' });
  });

  it("retries a child that failed after saving its slice (the Map's Retry); the report is the same", async () => {
    const { topic, group } = await scenario();
    const sequential = await sequentialReport(topic, group);
    const calls: Array<[string, unknown]> = [];
    let failed = false;
    const flaky = invoker(calls, async (fn, payload, run) => {
      const result = await run();
      if (fn === 'fanOutChild' && (payload as { slice: string }).slice === '8-11' && !failed) {
        failed = true;
        // As a Lambda that timed out once its slice was saved: the retry must count nothing twice.
        throw Object.assign(new Error('the task did not finish before the Lambda deadline'), {
          name: 'DependencyFailedError',
        });
      }
      return result;
    });
    const { report } = await runFanOut(flaky, topic, group);
    const children = calls.filter(([fn]) => fn === 'fanOutChild');
    expect(children).toHaveLength(PARTITIONS / 4 + 1);
    expect(children.filter(([, p]) => (p as { slice: string }).slice === '8-11')).toHaveLength(2);
    expect(comparable(report)).toEqual(comparable(sequential));
  });

  it('plans no child for a topic that does not exist: NotFoundError naming the topic, and the next plan still works', async () => {
    const missing = uniqueName('missing');
    await expect(tasks.fanOutPlan?.({ topic: missing }, lambdaContext())).rejects.toMatchObject({
      name: 'NotFoundError',
      message: expect.stringContaining(missing),
    });
    // The admin client that asked about the missing topic was replaced, not left failing.
    const { topic } = await scenario();
    const plan = (await tasks.fanOutPlan?.({ topic }, lambdaContext())) as { children: unknown[] };
    expect(plan.children).toHaveLength(PARTITIONS / 8);
  });
});
