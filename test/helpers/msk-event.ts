import type { MSKRecord } from 'aws-lambda';
import type { ReadRecord } from './publish-client.js';

/** A record read back from the broker in the shape Lambda's MSK event source hands it over. */
export function mskRecord(topic: string, r: ReadRecord): MSKRecord {
  return {
    topic,
    partition: r.partition,
    offset: Number(r.offset),
    timestamp: Number(r.timestamp),
    timestampType: 'CREATE_TIME',
    key: '',
    value: r.value?.toString('base64') ?? '',
    headers: Object.entries(r.headers ?? {}).map(([name, value]) => ({
      [name]: [...(value as Buffer)],
    })),
  };
}
