// A records:batch request at the limits (TALLY_MAX_BATCH_ENTRIES records, a body just under
// TALLY_MAX_REQUEST_BYTES), keyed and keyless, through the handler, and the same records through
// a raw kafkajs producer, taking turns. Part of bench/publish.ts (`--only limits`).
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Message, Producer } from 'kafkajs';
import { type Spread, spread } from './harness.js';

export interface LimitsFigures {
  readonly records: number;
  readonly requestBodyBytes: number;
  readonly payloadBytes: number;
  readonly handlerMs: Spread;
  readonly rawKafkajsMs: Spread;
  /** handler time / raw time of the same repeat. */
  readonly handlerOverRawPerPair: Spread;
}

export interface LimitsRun {
  readonly records: number;
  readonly maxRequestBytes: number;
  readonly repeats: number;
  /** Sends the body to the batch handler on a fresh topic's name; true when all were ACKED. */
  readonly handler: (topic: string, body: string) => Promise<boolean>;
  readonly raw: Producer;
  readonly topic: (purpose: string) => Promise<string>;
  readonly fail: (what: string, detail: string) => void;
}

/**
 * A raw producer cannot send this in one call either (a partition's share is over 1 MB, the
 * broker's default max.message.bytes), so it sends what a careful kafkajs user would: sends of
 * RAW_SEND_RECORDS records, one after another; keyless ones partitioned by kafkajs's default.
 */
const RAW_SEND_RECORDS = 150;

function recordsAtLimit(keyed: boolean, count: number, maxBytes: number) {
  const keys = Array.from({ length: count }, (_, i) => (keyed ? `key-${i}` : undefined));
  const body = (data: (i: number) => string) =>
    JSON.stringify({
      entries: keys.map((key, i) => ({
        id: `e${i}`,
        ...(key && { key: { type: 'STRING', data: key } }),
        value: { type: 'BINARY', data: data(i) },
      })),
    });
  const overhead = body(() => '').length;
  const quads = Math.floor((maxBytes - 8192 - overhead) / count / 4);
  const values = keys.map(() => randomBytes(quads * 3));
  const messages: Message[] = values.map((value, i) => ({ key: keys[i] ?? null, value }));
  return {
    body: body((i) => values[i]?.toString('base64') ?? ''),
    messages,
    payloadBytes: values.reduce((sum, value, i) => sum + (keys[i]?.length ?? 0) + value.length, 0),
  };
}

export async function limits(run: LimitsRun): Promise<Record<'keyed' | 'keyless', LimitsFigures>> {
  const figures: Partial<Record<'keyed' | 'keyless', LimitsFigures>> = {};
  for (const keyed of [true, false]) {
    const name = keyed ? 'keyed' : 'keyless';
    const { body, messages, payloadBytes } = recordsAtLimit(
      keyed,
      run.records,
      run.maxRequestBytes,
    );
    const handlerRun = async () => {
      const topic = await run.topic(`limits-${name}-${performance.now().toFixed(0)}`);
      const start = performance.now();
      const ok = await run.handler(topic, body);
      const ms = performance.now() - start;
      if (!ok) run.fail(`limits-${name}`, 'not every record was ACKED');
      return ms;
    };
    const rawRun = async () => {
      const topic = await run.topic(`limits-${name}-raw-${performance.now().toFixed(0)}`);
      const start = performance.now();
      for (let at = 0; at < messages.length; at += RAW_SEND_RECORDS) {
        await run.raw
          .send({ topic, acks: -1, messages: messages.slice(at, at + RAW_SEND_RECORDS) })
          .catch((error: unknown) => run.fail(`limits-${name}-raw`, String(error)));
      }
      return performance.now() - start;
    };
    await handlerRun(); // warm-up
    await rawRun();
    const handlerMs: number[] = [];
    const rawMs: number[] = [];
    for (let r = 0; r < run.repeats; r++) {
      handlerMs.push(await handlerRun());
      rawMs.push(await rawRun());
    }
    figures[name] = {
      records: run.records,
      requestBodyBytes: Buffer.byteLength(body),
      payloadBytes,
      handlerMs: spread(handlerMs),
      rawKafkajsMs: spread(rawMs),
      handlerOverRawPerPair: spread(handlerMs.map((h, r) => h / (rawMs[r] ?? Number.NaN))),
    };
  }
  return figures as Record<'keyed' | 'keyless', LimitsFigures>;
}
