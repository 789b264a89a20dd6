import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { Admin, IHeaders, KafkaMessage } from 'kafkajs';
import { expect, inject } from 'vitest';
import { httpEvent, lambdaContext } from './http-event.js';
import { testKafka } from './kafka.js';
import { createTopicsEverywhere } from './topics.js';
import { uniqueName } from './unique-name.js';

export interface Response {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

/** The publish handlers of one module instance (one "container"). */
export async function loadHandlers() {
  const wrap =
    (handler: Handler) =>
    async (event: APIGatewayProxyEventV2, context = lambdaContext()) =>
      (await handler(event, context)) as Response;
  // Spelled out: Vite resolves only literal dynamic imports.
  return {
    produce: wrap((await import('../../functions/publish/produce-handler.js')).handler),
    batch: wrap((await import('../../functions/publish/batch-handler.js')).handler),
    v2: wrap((await import('../../functions/publish/v2-handler.js')).handler),
    lookup: wrap((await import('../../functions/publish/lookup-handler.js')).handler),
    clusters: wrap((await import('../../functions/publish/clusters-handler.js')).handler),
  };
}

export function produceEvent(topic: string, body: unknown, headers: Record<string, string> = {}) {
  return httpEvent({
    pathParameters: { cluster_id: inject('kafkaClusterId'), topic_name: topic },
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Report lines of a v3 produce response (each ends with CRLF). */
export function reportLines(response: Response): Array<Record<string, unknown>> {
  expect(response.body.endsWith('\r\n')).toBe(true);
  return response.body
    .split('\r\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export async function createTopic(
  admin: Admin,
  partitions = 3,
  configs: Record<string, string> = {},
  /** The topic's name: `length` characters (a unique name padded), else a unique name. */
  length?: number,
) {
  const topic = length === undefined ? uniqueName('t') : uniqueName('t').padEnd(length, 'x');
  await createTopicsEverywhere(admin, [
    {
      topic,
      numPartitions: partitions,
      configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })),
    },
  ]);
  return topic;
}

export async function totalRecords(admin: Admin, topic: string): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((sum, o) => sum + Number(o.high) - Number(o.low), 0);
}

export type ReadRecord = KafkaMessage & { readonly partition: number };

/** Reads `count` records back with an independent consumer (its own group), or fails. */
export async function readBack(
  topic: string,
  count: number,
  timeoutMs = 30_000,
  kafka = testKafka('tally-test-reader'),
): Promise<ReadRecord[]> {
  const consumer = kafka.consumer({ groupId: uniqueName('reader') });
  const records: ReadRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`read ${records.length}/${count} records of ${topic}`)),
        timeoutMs,
      );
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            records.push({ ...message, partition });
            if (records.length >= count) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/** A header's value(s) as text. */
export function headerText(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.map((v) => v?.toString()).join(',');
  return value?.toString();
}
