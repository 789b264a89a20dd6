import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testKafka } from '../helpers/kafka.js';
import {
  createTopic,
  loadHandlers,
  produceEvent,
  readBack,
  reportLines,
  totalRecords,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';

// Where Tally answers as Confluent REST Proxy answers (issue 20), through the handlers, against the
// real broker: each case names the peer's source that says what REST Proxy does
// (github.com/confluentinc/kafka-rest, kafka-rest/src/...). docs/api.md lists what still differs.
const PEER = {
  noSchemaIT:
    'test/java/io/confluent/kafkarest/integration/v3/ProduceActionNoSchemaIntegrationTest.java',
  produceAction: 'main/java/io/confluent/kafkarest/resources/v3/ProduceAction.java',
};

describe('REST Proxy v3 produce: Content-Type and charset', () => {
  const admin: Admin = testKafka('tally-test-restproxy-ct').admin();
  let api: Awaited<ReturnType<typeof loadHandlers>>;
  let topic: string;

  beforeAll(async () => {
    await usePublishEnv();
    await admin.connect();
    api = await loadHandlers();
    topic = await createTopic(admin, 1);
  });
  afterAll(() => admin.disconnect());

  const record = { value: { type: 'STRING', data: 'x' } };
  const cases: Array<{ contentType: string; status: number; peer: string }> = [
    // @Consumes(MediaType.APPLICATION_JSON): Jersey refuses any other media type.
    { contentType: 'text/plain', status: 415, peer: PEER.produceAction },
    { contentType: 'application/x-www-form-urlencoded', status: 415, peer: PEER.produceAction },
    { contentType: 'application/json; charset=UTF-8', status: 200, peer: PEER.noSchemaIT },
    { contentType: 'application/json; charset=ISO-8859-1', status: 200, peer: PEER.noSchemaIT },
    { contentType: 'application/json; charset=DEADBEEF', status: 400, peer: PEER.noSchemaIT },
  ];

  it.each(cases)('$contentType → $status ($peer)', async ({ contentType, status }) => {
    const before = await totalRecords(admin, topic);
    for (const produce of [api.produce, api.batch]) {
      const body = produce === api.batch ? { entries: [{ id: 'a', ...record }] } : record;
      const response = await produce(produceEvent(topic, body, { 'content-type': contentType }));
      const expected = produce === api.batch && status === 200 ? 207 : status;
      expect(response.statusCode, response.body).toBe(expected);
      if (status >= 400) expect(JSON.parse(response.body).field).toBe('Content-Type');
    }
    const written = status === 200 ? 2 : 0;
    expect(await totalRecords(admin, topic)).toBe(before + written);
  });

  it('reads an ISO-8859-1 body as ISO-8859-1 (é is one byte there)', async () => {
    const latin1 = Buffer.from('{"value": {"type": "STRING", "data": "caf\u00e9"}}', 'latin1');
    const own = await createTopic(admin, 1);
    const event = produceEvent(own, latin1.toString('base64'), {
      'content-type': 'application/json; charset=ISO-8859-1',
    });
    const response = await api.produce({ ...event, isBase64Encoded: true });
    expect(reportLines(response)[0]).toMatchObject({ error_code: 200, value: { size: 5 } });
    const [written] = await readBack(own, 1);
    expect(written?.value?.toString('utf8')).toBe('caf\u00e9');
  });
});
