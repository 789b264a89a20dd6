import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpEvent } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import {
  createTopic,
  headerText,
  loadHandlers,
  produceEvent,
  readBack,
  totalRecords,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';

describe('batch produce (v3 records:batch) and v2 produce', () => {
  const admin: Admin = testKafka('tally-test-batch').admin();
  let api: Awaited<ReturnType<typeof loadHandlers>>;

  beforeAll(async () => {
    await usePublishEnv({ TALLY_MAX_BATCH_ENTRIES: '5' });
    await admin.connect();
    api = await loadHandlers();
  });
  afterAll(() => admin.disconnect());

  it('answers 207 with successes and failures by entry id', async () => {
    const topic = await createTopic(admin, 1);
    const response = await api.batch(
      produceEvent(topic, {
        entries: [
          { id: 'first', value: { type: 'STRING', data: 'one' } },
          { id: 'bad-b64', value: { type: 'BINARY', data: '%%%' } },
          { id: 'third_3', key: { type: 'STRING', data: 'k' }, value: { type: 'JSON', data: [1] } },
        ],
      }),
    );
    expect(response.statusCode).toBe(207);
    const body = JSON.parse(response.body);
    expect(body.successes.map((s: { id: string }) => s.id)).toEqual(['first', 'third_3']);
    expect(body.successes[1]).toMatchObject({
      error_code: 200,
      offset: 1,
      seq: 2,
      topic_name: topic,
    });
    expect(body.failures).toEqual([
      expect.objectContaining({ id: 'bad-b64', error_code: 400, outcome: 'REJECTED' }),
    ]);
    expect(body.failures[0].message).toContain('entries[1].value.data');
    const records = await readBack(topic, 2);
    expect(records.map((r) => r.value?.toString()).sort()).toEqual(['[1]', 'one']);
  });

  it('refuses the whole batch with 422, producing nothing, when the entry list is wrong', async () => {
    const topic = await createTopic(admin, 1);
    const entry = (id: unknown) => ({ id, value: { type: 'STRING', data: 'x' } });
    const cases: Array<[unknown, string]> = [
      [{ entries: [] }, 'entries'],
      [{ entries: [entry('a'), entry('a')] }, 'entries[1].id'],
      [{ entries: [entry('has space')] }, 'entries[0].id'],
      [{ entries: [entry('x'.repeat(81))] }, 'entries[0].id'],
      [{ entries: [entry(7)] }, 'entries[0].id'],
      [{ entries: ['1', '2', '3', '4', '5', '6'].map(entry) }, 'at most 5'],
    ];
    for (const [body, expected] of cases) {
      const response = await api.batch(produceEvent(topic, body));
      expect(response.statusCode, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(JSON.parse(response.body)).toMatchObject({ error_code: 42208 });
      expect(JSON.parse(response.body).message).toContain(expected);
    }
    expect(await totalRecords(admin, topic)).toBe(0);
  });

  it('takes the v2 JSON embedded format and answers with offsets', async () => {
    const topic = await createTopic(admin, 1);
    const response = await api.v2(
      httpEvent({
        pathParameters: { topic_name: topic },
        headers: { 'content-type': 'application/vnd.kafka.json.v2+json' },
        body: JSON.stringify({
          records: [
            { key: 'k1', value: { n: 1 }, headers: [{ key: 'h', value: 'aGk=' }] },
            { value: { n: 2 }, partition: 4 },
          ],
        }),
      }),
    );
    expect(response.statusCode).toBe(200);
    const { offsets } = JSON.parse(response.body);
    expect(offsets[0]).toMatchObject({ partition: 0, offset: 0, seq: 1 });
    expect(offsets[1]).toMatchObject({ partition: null, offset: null, error_code: 40402 });
    const [record] = await readBack(topic, 1);
    expect(record?.key?.toString()).toBe('"k1"');
    expect(record?.value?.toString()).toBe('{"n":1}');
    expect(headerText(record?.headers, 'h')).toBe('hi');
  });

  it('takes the v2 binary embedded format and refuses unknown media types', async () => {
    const topic = await createTopic(admin, 1);
    const binary = await api.v2(
      httpEvent({
        pathParameters: { topic_name: topic },
        headers: { 'content-type': 'application/vnd.kafka.binary.v2+json' },
        body: JSON.stringify({ records: [{ value: Buffer.from([0, 255]).toString('base64') }] }),
      }),
    );
    expect(JSON.parse(binary.body).offsets[0]).toMatchObject({ offset: 0 });
    const [record] = await readBack(topic, 1);
    expect(record?.value).toEqual(Buffer.from([0, 255]));
    const avro = await api.v2(
      httpEvent({
        pathParameters: { topic_name: topic },
        headers: { 'content-type': 'application/vnd.kafka.avro.v2+json' },
        body: '{"records":[{"value":1}]}',
      }),
    );
    expect(avro.statusCode).toBe(415);
    expect(JSON.parse(avro.body).message).toContain('Content-Type');
  });
});
