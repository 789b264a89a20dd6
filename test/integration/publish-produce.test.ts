import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { partitionForKey } from '../../functions/core/shared/murmur2.js';
import { httpEvent } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import {
  createTopic,
  headerText,
  loadHandlers,
  produceEvent,
  readBack,
  reportLines,
  totalRecords,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';

// REST Proxy v3 produce through the handler, against the real broker and DynamoDB API; what
// landed is read back with an independent kafkajs consumer.
describe('POST /v3/clusters/{cluster_id}/topics/{topic_name}/records', () => {
  const admin: Admin = testKafka('tally-test-produce').admin();
  let api: Awaited<ReturnType<typeof loadHandlers>>;

  beforeAll(async () => {
    await usePublishEnv();
    await admin.connect();
    api = await loadHandlers();
  });
  afterAll(() => admin.disconnect());

  it('writes exactly the promised bytes and headers, and reports where', async () => {
    const topic = await createTopic(admin);
    const response = await api.produce(
      produceEvent(topic, {
        key: { type: 'STRING', data: 'order-7' },
        value: { type: 'JSON', data: 'bar' },
        headers: [
          { name: 'trace', value: Buffer.from('t-1').toString('base64') },
          { name: 'empty', value: '' },
        ],
        timestamp: '2026-11-29T10:00:00Z',
      }),
    );
    expect(response.statusCode, response.body).toBe(200);
    const [report] = reportLines(response);
    const partition = partitionForKey(Buffer.from('order-7'), 3);
    expect(report).toMatchObject({
      error_code: 200,
      cluster_id: inject('kafkaClusterId'),
      topic_name: topic,
      partition_id: partition,
      offset: 0,
      timestamp: '2026-11-29T10:00:00Z',
      key: { type: 'STRING', size: 7 },
      value: { type: 'JSON', size: 5 },
      stream: topic,
      seq: 1,
    });
    const [record] = await readBack(topic, 1);
    expect(record?.partition).toBe(partition);
    expect(record?.key?.toString()).toBe('order-7');
    expect(record?.value?.toString()).toBe('"bar"');
    expect(record?.timestamp).toBe(String(Date.parse('2026-11-29T10:00:00Z')));
    expect(headerText(record?.headers, 'trace')).toBe('t-1');
    expect(record?.headers?.empty).toEqual(Buffer.alloc(0));
    expect(headerText(record?.headers, 'tally.stream')).toBe(topic);
    expect(headerText(record?.headers, 'tally.seq')).toBe('1');
    expect(headerText(record?.headers, 'tally.session')).toMatch(/^s-/);
    expect(record?.headers?.['tally.idempotency-key']).toBeUndefined();
  });

  it('streams several records, encodes each type, and reports a bad one in its place', async () => {
    const topic = await createTopic(admin, 1);
    const body = [
      { value: { type: 'BINARY', data: 'AAEC' } },
      { value: { type: 'BINARY', data: 'AAE' } },
      { key: { type: 'STRING', data: 'é' }, value: { type: 'STRING', data: 'żółw' } },
      { value: { type: 'BINARY', data: 'not base64!' } },
      { key: { type: 'JSON', data: null }, value: { type: 'JSON', data: { a: [1, 2], b: 'x' } } },
      { value: { type: 'STRING', data: null } },
    ]
      .map((record) => JSON.stringify(record))
      .join('\n');
    const response = await api.produce(produceEvent(topic, body));
    expect(response.statusCode).toBe(200);
    const reports = reportLines(response);
    expect(reports.map((r) => r.error_code)).toEqual([200, 200, 200, 400, 200, 200]);
    expect(reports[3]).toMatchObject({ outcome: 'REJECTED', retriable: false });
    expect(String(reports[3]?.message)).toContain('value.data');
    expect(reports.map((r) => r.seq)).toEqual([1, 2, 3, undefined, 4, 5]);
    expect(reports[2]).toMatchObject({ key: { type: 'STRING', size: 2 }, value: { size: 7 } });
    expect(reports[4]).toMatchObject({ key: { type: 'JSON', size: -1 }, value: { size: 19 } });
    expect(reports[5]).toMatchObject({ value: { type: 'STRING', size: -1 } });

    const records = (await readBack(topic, 5)).sort((a, b) => Number(a.offset) - Number(b.offset));
    expect(records.map((r) => r.value?.toString('hex') ?? null)).toEqual([
      '000102',
      '0001',
      Buffer.from('żółw').toString('hex'),
      Buffer.from('{"a":[1,2],"b":"x"}').toString('hex'),
      null,
    ]);
    expect(records[3]?.key).toBeNull();
    expect(records.map((r) => headerText(r.headers, 'tally.seq'))).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
    ]);
  });

  it('gives each stream its own dense sequence, across requests', async () => {
    const topic = await createTopic(admin);
    const one = { value: { type: 'STRING', data: 'x' } };
    const seqs = async (stream?: string) => {
      const headers = stream ? { 'Tally-Stream': stream } : {};
      const response = await api.produce(
        produceEvent(topic, [one, one].map((r) => JSON.stringify(r)).join(''), headers),
      );
      return reportLines(response).map((r) => [r.stream, r.seq]);
    };
    expect(await seqs()).toEqual([
      [topic, 1],
      [topic, 2],
    ]);
    expect(await seqs(`${topic}.payments`)).toEqual([
      [`${topic}.payments`, 1],
      [`${topic}.payments`, 2],
    ]);
    expect(await seqs()).toEqual([
      [topic, 3],
      [topic, 4],
    ]);
  });

  it('honours an explicit partition and refuses one that does not exist', async () => {
    const topic = await createTopic(admin, 2);
    const ok = await api.produce(
      produceEvent(topic, { partition_id: 1, value: { type: 'STRING', data: 'p1' } }),
    );
    expect(reportLines(ok)[0]).toMatchObject({ error_code: 200, partition_id: 1 });
    const missing = await api.produce(
      produceEvent(topic, { partition_id: 2, value: { type: 'STRING', data: 'p2' } }),
    );
    expect(missing.statusCode).toBe(200);
    expect(reportLines(missing)[0]).toMatchObject({ error_code: 40402 });
    expect(await totalRecords(admin, topic)).toBe(1);
  });

  it('refuses a body that is not records with a 4xx naming it, and writes nothing', async () => {
    const topic = await createTopic(admin);
    const cases: Array<[string, number, number]> = [
      ['', 422, 42206],
      ['{"value": {"type": "STRING", "data": "x"}', 400, 400],
    ];
    for (const [body, status, code] of cases) {
      const response = await api.produce(produceEvent(topic, body));
      expect(response.statusCode, body).toBe(status);
      const parsed = JSON.parse(response.body.trim()) as { message: string; error_code: number };
      expect(parsed, body).toMatchObject({ error_code: code, field: 'body' });
    }
    expect(await totalRecords(admin, topic)).toBe(0);
  });

  // As REST Proxy answers a record it cannot produce (ProduceActionNoSchemaIntegrationTest:
  // produceWithInvalidData_throwsBadRequest → 200, error_code 400): in the record's line.
  it('reports a bad record in its line, naming the field, with 200 and nothing written', async () => {
    const topic = await createTopic(admin);
    const cases: Array<[string, string]> = [
      ['{"value": {"type": "AVRO2", "data": "x"}}', 'value.type'],
      ['{"valu": {"type": "STRING", "data": "x"}}', 'valu'],
      ['{"value": {"type": "STRING"}}', 'value.data'],
      ['{"timestamp": "yesterday", "value": {"type": "STRING", "data": "x"}}', 'timestamp'],
      ['{"headers": [{"name": "tally.seq", "value": ""}]}', 'headers[0].name'],
    ];
    for (const [body, field] of cases) {
      const response = await api.produce(produceEvent(topic, body));
      expect(response.statusCode, body).toBe(200);
      const [report] = reportLines(response);
      expect(report, body).toMatchObject({ error_code: 400, outcome: 'REJECTED' });
      expect(String(report?.message), body).toContain(field);
    }
    expect(await totalRecords(admin, topic)).toBe(0);
  });

  it('answers 404 for an unknown cluster, 400 for an illegal topic name, 403 for internal topics', async () => {
    const unknownCluster = await api.produce(
      httpEvent({ pathParameters: { cluster_id: 'nope', topic_name: 'x' }, body: '{}' }),
    );
    expect(unknownCluster.statusCode).toBe(404);
    expect(JSON.parse(unknownCluster.body).message).toContain('cluster_id');
    const illegal = await api.produce(
      produceEvent('fincx.repayment.status （wpk-reactor-web）', '{}'),
    );
    expect(illegal.statusCode).toBe(400);
    expect(JSON.parse(illegal.body).message).toContain('topic_name');
    const internal = await api.produce(
      produceEvent('__consumer_offsets', { value: { type: 'STRING', data: 'x' } }),
    );
    expect(internal.statusCode).toBe(403);
    const missing = await api.produce(
      produceEvent('no-such-topic', { value: { type: 'STRING', data: 'x' } }),
    );
    expect(missing.statusCode).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ error_code: 40403 });
    expect(await admin.listTopics()).not.toContain('no-such-topic');
  });

  it("refuses a record over the topic's max.message.bytes with 413 and sends the rest", async () => {
    const topic = await createTopic(admin, 1, { 'max.message.bytes': '2048' });
    const big = { value: { type: 'STRING', data: 'x'.repeat(4096) } };
    const small = { value: { type: 'STRING', data: 'y' } };
    const single = await api.produce(produceEvent(topic, big));
    expect(single.statusCode).toBe(200);
    expect(reportLines(single)[0]).toMatchObject({ error_code: 413 });
    expect(reportLines(single)[0]?.message).toContain('max.message.bytes');
    const mixed = await api.produce(
      produceEvent(topic, JSON.stringify(big) + JSON.stringify(small)),
    );
    expect(reportLines(mixed).map((r) => r.error_code)).toEqual([413, 200]);
    expect(await totalRecords(admin, topic)).toBe(1);
  });

  it('reports a broker refusal as FAILED with the Kafka error, and records it in the ledger', async () => {
    // The topic refuses records more than an hour old: Kafka answers INVALID_TIMESTAMP.
    const topic = await createTopic(admin, 1, { 'message.timestamp.before.max.ms': '3600000' });
    const old = { value: { type: 'STRING', data: 'x' }, timestamp: '2020-01-01T00:00:00Z' };
    const response = await api.produce(produceEvent(topic, old));
    expect(response.statusCode).toBe(200);
    const [report] = reportLines(response);
    expect(report).toMatchObject({ error_code: 422, outcome: 'FAILED', retriable: false, seq: 1 });
    expect(String(report?.message)).toContain('INVALID_TIMESTAMP');
    const lookup = await api.lookup(
      httpEvent({
        pathParameters: { cluster_id: inject('kafkaClusterId') },
        query: { stream: topic, seq: '1' },
      }),
    );
    expect(JSON.parse(lookup.body).records[0]).toMatchObject({ outcome: 'FAILED' });
    expect(await totalRecords(admin, topic)).toBe(0);
  });

  it('answers the lookup: where a record landed, by stream and seq or by Idempotency-Key', async () => {
    const topic = await createTopic(admin, 1);
    await api.produce(
      produceEvent(
        topic,
        { value: { type: 'STRING', data: 'a' } },
        { 'Idempotency-Key': `${topic}-k` },
      ),
    );
    const lookup = (query: Record<string, string>) =>
      api.lookup(httpEvent({ pathParameters: { cluster_id: inject('kafkaClusterId') }, query }));
    const bySeq = await lookup({ stream: topic, seq: '1' });
    expect(bySeq.statusCode).toBe(200);
    expect(JSON.parse(bySeq.body).records).toEqual([
      expect.objectContaining({
        stream: topic,
        seq: 1,
        outcome: 'ACKED',
        partition_id: 0,
        offset: 0,
        idempotency_key: `${topic}-k`,
      }),
    ]);
    const byKey = await lookup({ idempotency_key: `${topic}-k` });
    expect(JSON.parse(byKey.body).records[0]).toMatchObject({ seq: 1, outcome: 'ACKED' });
    expect((await lookup({ stream: topic, seq: '2' })).statusCode).toBe(404);
    // A seq is digits: not 'x', nor what Number() would also read as 1 or 100.
    for (const seq of ['x', '1e2', '0x1', ' 1', '1.0', '+1', '0', '']) {
      const refused = await lookup({ stream: topic, seq });
      expect(refused.statusCode, `seq=${JSON.stringify(seq)}`).toBe(400);
      expect(JSON.parse(refused.body).message).toMatch(/^seq: /);
    }
  });

  it('lists the cluster and answers 404 for another', async () => {
    const list = await api.clusters(httpEvent({}));
    const [cluster] = JSON.parse(list.body).data;
    expect(cluster.cluster_id).toBe(inject('kafkaClusterId'));
    // What Confluent's v3 document requires of a cluster: a `related` link for each of these.
    for (const link of [
      'acls',
      'brokers',
      'broker_configs',
      'consumer_groups',
      'topics',
      'partition_reassignments',
    ]) {
      expect(cluster[link], link).toEqual({
        related: expect.stringMatching(new RegExp(`^${cluster.metadata.self}/`)),
      });
    }
    const other = await api.clusters(httpEvent({ pathParameters: { cluster_id: 'other' } }));
    expect(other.statusCode).toBe(404);
  });
});
