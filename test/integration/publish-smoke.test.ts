import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

describe('publish smoke', () => {
  const topic = uniqueName('smoke');
  const admin = testKafka('smoke').admin();
  beforeAll(async () => {
    await usePublishEnv();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
  });
  afterAll(async () => {
    await admin.disconnect();
  });

  it('produces', async () => {
    const { handler } = await import('../../functions/publish/produce-handler.js');
    const event = httpEvent({
      pathParameters: { cluster_id: inject('kafkaClusterId'), topic_name: topic },
      body: '{"key":{"type":"STRING","data":"k1"},"value":{"type":"JSON","data":"bar"}}{"value":{"type":"BINARY","data":"AAEC"}}',
    });
    const response = await handler(event, lambdaContext());
    console.log(response);
    expect(response.statusCode).toBe(200);
  });
});
