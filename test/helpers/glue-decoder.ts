import { inflateSync } from 'node:zlib';
import { kafkaConsumer, SchemaType } from '@aws-lambda-powertools/kafka';
import protobuf from 'protobufjs';
import { lambdaContext } from './http-event.js';

// An independent reader of AWS Glue Schema Registry's wire format, sharing no code with Tally's
// serializer: the 18-byte header is read here by hand (as Lambda's MSK event source does when a
// Glue registry is configured on it: it strips the header and hands over the payload with its
// schema version id), and the payload is decoded by @aws-lambda-powertools/kafka (avro-js for
// Avro, protobufjs for Protobuf, JSON.parse for JSON Schema).

export interface GlueHeader {
  readonly headerVersion: number;
  readonly compression: number;
  readonly schemaVersionId: string;
  readonly payload: Buffer;
}

export function readGlueHeader(bytes: Buffer): GlueHeader {
  const hex = bytes.subarray(2, 18).toString('hex');
  const compression = bytes[1] ?? -1;
  const raw = bytes.subarray(18);
  return {
    headerVersion: bytes[0] ?? -1,
    compression,
    schemaVersionId: [
      hex.slice(0, 8),
      hex.slice(8, 12),
      hex.slice(12, 16),
      hex.slice(16, 20),
      hex.slice(20),
    ].join('-'),
    payload: compression === 5 ? inflateSync(raw) : raw,
  };
}

export type GlueFormat = 'AVRO' | 'JSON' | 'PROTOBUF';

/** The value Powertools' kafkaConsumer decodes from a Glue-framed record value. */
export async function decodeGlueValue(
  bytes: Buffer,
  format: GlueFormat,
  schema: string,
): Promise<unknown> {
  const header = readGlueHeader(bytes);
  const config =
    format === 'AVRO'
      ? { type: SchemaType.AVRO, schema }
      : format === 'PROTOBUF'
        ? { type: SchemaType.PROTOBUF, schema: firstMessage(schema) }
        : { type: SchemaType.JSON };
  let decoded: unknown;
  const handler = kafkaConsumer(
    async (event) => {
      for (const record of event.records) decoded = record.value;
    },
    { value: config } as never,
  );
  await handler(
    {
      eventSource: 'aws:kafka',
      eventSourceArn: 'arn:aws:kafka:us-east-1:000000000000:cluster/test/x',
      bootstrapServers: 'localhost:9092',
      records: {
        'orders-0': [
          {
            topic: 'orders',
            partition: 0,
            offset: 0,
            timestamp: 0,
            timestampType: 'CREATE_TIME',
            key: '',
            value: header.payload.toString('base64'),
            headers: [],
            valueSchemaMetadata: { dataFormat: format, schemaId: header.schemaVersionId },
          },
        ],
      },
    } as never,
    lambdaContext() as never,
  );
  return JSON.parse(JSON.stringify(decoded)) as unknown;
}

function firstMessage(schema: string): protobuf.Type {
  const parsed = protobuf.parse(schema);
  const scope = parsed.package ? parsed.root.lookup(parsed.package) : parsed.root;
  const message = (scope as protobuf.Namespace).nestedArray.find(
    (nested): nested is protobuf.Type => nested instanceof protobuf.Type,
  );
  if (message === undefined) throw new Error('the schema declares no message');
  return message;
}
