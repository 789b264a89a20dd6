import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import { tableEnvironment } from '../../infra/local/local-tables.js';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { httpEvent, lambdaContext, testAuthEnv } from '../helpers/http-event.js';
import { headerText, loadHandlers, readBack, reportLines } from '../helpers/publish-client.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// Seed 003: a broker that stops answering (a GC pause, here SIGSTOP) must turn into a definite
// answer inside the request's deadline — UNKNOWN for a record that was sent, NOT_SENT for one
// that never left — and a retry with the same Idempotency-Key must reuse the same seqs.
// This file runs a stack of its own: pausing the shared broker would stall other test files.
describe('deadlines with a paused broker', () => {
  let stack: LocalStack;
  let brokerPid: number;
  let topic: string;
  let clusterId: string;
  let api: Awaited<ReturnType<typeof loadHandlers>>;
  const record = { key: { type: 'STRING', data: 'k' }, value: { type: 'STRING', data: 'paused' } };
  const event = (headers: Record<string, string>) =>
    httpEvent({
      pathParameters: { cluster_id: clusterId, topic_name: topic },
      headers,
      body: JSON.stringify(record),
    });

  beforeAll(async () => {
    stack = await startLocalStack({ env: {}, tablePrefix: `${uniqueName('deadline')}-` });
    brokerPid = stack.processes.find((p) => p.name === 'kafka broker')?.pid as number;
    clusterId = stack.kafkaClusterId;
    Object.assign(process.env, {
      KAFKA_BROKERS: stack.kafkaBrokers,
      DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
      ...tableEnvironment(stack.tables),
      ...testAuthEnv(),
      TALLY_AUDIT_HORIZON_SECONDS: '0',
    });
    topic = uniqueName('paused');
    const admin = new Kafka({ brokers: [stack.kafkaBrokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await createTopicsEverywhere(admin, [{ topic, numPartitions: 1 }]);
    await admin.disconnect();
    vi.resetModules();
    api = await loadHandlers();
    const warm = await api.produce(event({}));
    expect(warm.statusCode).toBe(200);
  }, 120_000);

  afterAll(async () => {
    if (brokerPid) process.kill(brokerPid, 'SIGCONT');
    await stack?.stop();
  });

  it('answers UNKNOWN by the deadline, 409 to a concurrent repeat, and re-sends with the same seq later', async () => {
    process.kill(brokerPid, 'SIGSTOP');
    const key = uniqueName('key');
    const started = performance.now();
    const first = api.produce(event({ 'Idempotency-Key': key, 'Tally-Timeout-Ms': '2500' }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const repeat = await api.produce(event({ 'Idempotency-Key': key, 'Tally-Timeout-Ms': '2500' }));
    expect(repeat.statusCode).toBe(409);
    const unknown = await first;
    const elapsed = performance.now() - started;
    expect(unknown.statusCode).toBe(504);
    const [report] = reportLines(unknown);
    expect(report).toMatchObject({ error_code: 504, outcome: 'UNKNOWN', retriable: true, seq: 2 });
    expect(elapsed).toBeGreaterThan(2000);
    expect(elapsed).toBeLessThan(3500);

    // A new container cannot even load metadata: 503, nothing sent, no seq spent.
    vi.resetModules();
    const cold = await loadHandlers();
    const coldStarted = performance.now();
    const notSent = await cold.produce(event({ 'Tally-Timeout-Ms': '1500' }));
    expect(performance.now() - coldStarted).toBeLessThan(2500);
    expect(notSent.statusCode).toBe(503);
    expect(notSent.headers['retry-after']).toBe('1');
    expect(JSON.parse(notSent.body).message).toContain('nothing was sent');

    process.kill(brokerPid, 'SIGCONT');
    const retry = await api.produce(event({ 'Idempotency-Key': key }));
    expect(retry.statusCode).toBe(200);
    expect(reportLines(retry)[0]).toMatchObject({ error_code: 200, seq: 2 });
    const again = await api.produce(event({ 'Idempotency-Key': key }));
    expect(again.body).toBe(retry.body);

    // The log holds seq 1 once and seq 2 once or twice (the paused send may have landed too):
    // every copy carries the same seq, so the audit can tell it is the same record.
    const lookup = await api.lookup(
      httpEvent({ pathParameters: { cluster_id: clusterId }, query: { stream: topic, seq: '2' } }),
    );
    expect(JSON.parse(lookup.body).records[0]).toMatchObject({
      outcome: 'ACKED',
      offset: reportLines(retry)[0]?.offset,
    });
    const total = Number(reportLines(retry)[0]?.offset) + 1;
    const kafka = new Kafka({ brokers: [stack.kafkaBrokers], logLevel: logLevel.NOTHING });
    const records = await readBack(topic, total, 30_000, kafka);
    const seqs = records.map((r) => headerText(r.headers, 'tally.seq'));
    expect(seqs.filter((s) => s === '1')).toHaveLength(1);
    expect(seqs.filter((s) => s === '2').length).toBeGreaterThanOrEqual(1);
    expect(seqs.filter((s) => s !== '1' && s !== '2')).toEqual([]);

    // The audit explains it: nothing lost, no UNKNOWN left, and seq 2 at most twice — a
    // producer-side duplicate naming both copies and their sessions.
    const { handler: auditNow } = await import('../../functions/audit/http-handler.js');
    const audited = await auditNow(
      httpEvent({ pathParameters: { cluster_id: clusterId }, body: JSON.stringify({ topic }) }),
      lambdaContext(),
    );
    expect(audited.statusCode, audited.body).toBe(200);
    const findings = (JSON.parse(audited.body ?? '{}') as AuditReport).streams.find(
      (s) => s.stream === topic,
    );
    expect(findings).toMatchObject({ lost: [], unknownAbsent: [] });
    const copies = seqs.filter((s) => s === '2').length;
    expect(findings?.producerDuplicates).toEqual(
      copies === 1 ? [] : [expect.objectContaining({ seq: 2, times: 2 })],
    );
    for (const duplicate of findings?.producerDuplicates ?? []) {
      expect(duplicate.copies).toHaveLength(2);
      expect(new Set(duplicate.copies.map((c) => c.session)).size).toBe(2);
    }
  }, 60_000);
});
