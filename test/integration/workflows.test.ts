import type { Admin, Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createLocalStepFunctions,
  type Execution,
  type LocalStepFunctions,
  serveLocalStepFunctions,
} from '../../infra/local/step-functions.js';
import { inProcessInvoker } from '../helpers/function-invoker.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { setOffsets, testKafka } from '../helpers/kafka.js';
import { createTopic, loadHandlers, produceEvent, readBack } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// Both state machines of infra/state-machines/, run by the local ASL interpreter, their Task
// states calling our functions, against the real local broker and DynamoDB API. Approvals go
// through the HTTP route and Step Functions' task-token API (answered by the local endpoint).
describe('workflows', () => {
  const kafka = testKafka('tally-test-workflows');
  const admin: Admin = kafka.admin();
  const calls: string[] = [];
  const cluster = () => ({ cluster_id: inject('kafkaClusterId') });
  let sfn: LocalStepFunctions;
  let server: Awaited<ReturnType<typeof serveLocalStepFunctions>>;
  let api: Awaited<ReturnType<typeof loadHandlers>>;

  beforeAll(async () => {
    sfn = createLocalStepFunctions({
      invoke: inProcessInvoker(calls),
      retryIntervalMs: 2000,
      waitMs: 200,
    });
    server = await serveLocalStepFunctions(sfn);
    await usePublishEnv({
      TALLY_AUDIT_HORIZON_SECONDS: '0',
      TALLY_STEP_FUNCTIONS_ENDPOINT: server.url,
    });
    await admin.connect();
    api = await loadHandlers();
  });
  afterAll(async () => {
    sfn.stop();
    await server.close();
    await admin.disconnect();
  });

  const until = async <T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  const publish = async (topic: string, n: number) => {
    const body = Array.from({ length: n }, (_, i) =>
      JSON.stringify({ value: { type: 'STRING', data: `v${i}` } }),
    ).join('');
    expect((await api.produce(produceEvent(topic, body))).statusCode).toBe(200);
  };

  /** A group on `topic` that committed 3, was seen by reconcile, then was rewound to 1. */
  const rewoundGroup = async (topic: string) => {
    const group = uniqueName('repair');
    const reconcile = (await import('../../functions/reconcile/task-handler.js')).handler;
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '3' }] });
    await reconcile({}, lambdaContext());
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '1' }] });
    return group;
  };

  const committed = async (group: string, topic: string) =>
    (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]?.partitions[0]?.offset;

  const pendingApproval = (execution: Execution) =>
    until('the approval request', async () => {
      const { list } = await import('../../functions/workflows/approvals-handler.js');
      const response = await list(httpEvent({ pathParameters: cluster() }), lambdaContext());
      const { approvals } = JSON.parse(response.body ?? '{}') as {
        approvals: Array<{ token: string; execution: string; subject: Record<string, unknown> }>;
      };
      return approvals.find((a) => a.execution === execution.executionArn);
    });

  const decide = async (token: string, decision: 'approve' | 'reject', reason?: string) => {
    const { handler } = await import('../../functions/workflows/approvals-handler.js');
    return handler(
      httpEvent({
        pathParameters: { ...cluster(), token },
        body: JSON.stringify({ decision, by: 'test', ...(reason && { reason }) }),
      }),
      lambdaContext(),
    );
  };

  /** An offset-repair of a rewound group on a new topic, waiting for a person's decision. */
  const repairAwaitingApproval = async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, 4);
    const group = await rewoundGroup(topic);
    const execution = sfn.start('offset-repair', { group });
    return { topic, group, execution, approval: await pendingApproval(execution) };
  };

  it('offset-repair: waits for approval, retries while the group has members, restores and audits', async () => {
    const { topic, group, execution, approval } = await repairAwaitingApproval();
    // The plan is stored; the request names it by id and digest, with counts and a preview.
    expect(approval.subject).toMatchObject({
      group,
      planId: expect.any(String),
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      partitions: 1,
      topics: [topic],
      preview: [{ topic, partition: 0, current: 1, target: 3 }],
    });
    expect(execution.status).toBe('RUNNING');

    // A consumer joins: the workflow must wait (GroupNotEmptyError, retried) until it leaves.
    const consumer: Consumer = kafka.consumer({ groupId: group });
    await consumer.connect();
    await consumer.subscribe({ topic });
    await consumer.run({ autoCommit: false, eachMessage: async () => {} });
    await until('the consumer to join', async () => {
      const [described] = (await admin.describeGroups([group])).groups;
      return described?.state === 'Stable' ? true : undefined;
    });
    const approved = await decide(approval.token, 'approve', 'rewind confirmed');
    expect(approved.statusCode, approved.body).toBe(200);
    await until('a retry of CheckGroupEmpty', async () =>
      execution.history.find((e) => e.type === 'StateRetried' && e.state === 'CheckGroupEmpty'),
    );
    await consumer.disconnect();

    const done = await sfn.settled('offset-repair', execution.name);
    expect(done.status, `${done.error}: ${done.cause}`).toBe('SUCCEEDED');
    expect(await committed(group, topic)).toBe('3');
    expect(done.output).toMatchObject({
      group,
      approval: { approved: true, by: 'test', reason: 'rewind confirmed' },
      restored: {
        group,
        planId: approval.subject.planId,
        digest: approval.subject.digest,
        partitions: 1,
        topics: 1,
      },
      audits: [{ audits: [expect.objectContaining({ topic, complete: true })] }],
    });
    const entered = done.history.filter((e) => e.type === 'StateEntered').map((e) => e.state);
    expect(entered).toEqual(
      expect.arrayContaining([
        'Reconcile',
        'PlanRepair',
        'WaitForApproval',
        'ExecuteRestore',
        'Audit',
        'Report',
      ]),
    );
    // Decided once: a second decision is refused.
    expect((await decide(approval.token, 'reject')).statusCode).toBe(409);
  });

  it('offset-repair: a rejection fails the execution with ApprovalRejected and changes no offset', async () => {
    const { topic, group, execution, approval } = await repairAwaitingApproval();
    const rejected = await decide(approval.token, 'reject', 'not now');
    expect(rejected.statusCode, rejected.body).toBe(200);
    const done = await sfn.settled('offset-repair', execution.name);
    expect(done.status).toBe('FAILED');
    expect(done.error).toBe('ApprovalRejected');
    expect(done.history.some((e) => e.type === 'StateEntered' && e.state === 'Rejected')).toBe(
      true,
    );
    expect(await committed(group, topic)).toBe('1');
  });

  it('offset-repair: a group at its last good offsets ends without asking anyone', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, 2);
    const group = uniqueName('healthy');
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '2' }] });
    const done = await sfn.settled('offset-repair', sfn.start('offset-repair', { group }).name);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.history.map((e) => e.state)).not.toContain('WaitForApproval');
    expect(done.history.map((e) => e.state)).toContain('NothingToRepair');
  });

  const records = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      idempotencyKey: uniqueName(`key-${i}`),
      value: { type: 'JSON', data: { n: i } },
    }));

  it('publish-and-verify: succeeds when every record is ACKED and in the log exactly once', async () => {
    const topic = await createTopic(admin, 2);
    const input = { topic, records: records(3) };
    const done = await sfn.settled(
      'publish-and-verify',
      sfn.start('publish-and-verify', input).name,
    );
    expect(done.status, `${done.error}: ${done.cause}`).toBe('SUCCEEDED');
    expect(done.output).toMatchObject({ verified: { verified: 3 } });
    expect(await readBack(topic, 3)).toHaveLength(3);
    const { published } = done.output as { published: Array<Record<string, unknown>> };
    expect(published).toEqual(
      input.records.map((r) => ({ idempotencyKey: r.idempotencyKey, seq: expect.any(Number) })),
    );
  });

  it('publish-and-verify: fails with the findings when records are gone before the audit', async () => {
    // The audit task starts only once the records are gone (not after a Wait long enough for the
    // deletion, which a loaded machine may outlast).
    let gone = () => {};
    const recordsGone = new Promise<void>((resolve) => {
      gone = resolve;
    });
    const invoke = inProcessInvoker();
    const slow = createLocalStepFunctions({
      invoke: async (functionName, payload) => {
        if (functionName === 'audit') await recordsGone;
        return invoke(functionName, payload);
      },
      waitMs: 0,
    });
    const topic = await createTopic(admin, 1);
    const execution = slow.start('publish-and-verify', { topic, records: records(2) });
    await until('the Settle wait', async () =>
      execution.history.find((e) => e.type === 'StateEntered' && e.state === 'Settle'),
    );
    // Retention (here deleteRecords) takes them before the audit reads the log.
    await admin.fetchTopicOffsets(topic);
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '-1' }] });
    gone();
    const done = await slow.settled('publish-and-verify', execution.name);
    expect(done.status).toBe('FAILED');
    expect(done.error).toBe('VerificationFailedError');
    expect(done.cause).toContain('lost');
    expect(done.cause).toContain('2 of 2 records');
  });
});
