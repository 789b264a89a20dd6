// `npm run bench:schema`: what serializing a record with a schema costs, per record, beside a
// plain JSON record (type JSON: JSON.stringify to UTF-8 bytes, what the v3 routes do without a
// schema). The same order object through the publish functions' own encoder (core SchemaEncoder
// port → serializer → codec → Confluent wire format) for Avro, Protobuf and JSON Schema, each by
// schema id, after the first record (the registry is asked once per schema per container, so
// every record but the first pays only this). The registry here answers in process: its cost is
// the first record's, shown apart with the codecs' import and each schema's compile. Rounds
// alternate the columns so load on the machine falls on all alike. Prints JSON (harness.ts writeResults).
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import type { SchemaPart } from '../functions/core/rest-proxy/schema-input.js';
import { machineFacts, note, smokeOr, writeResults } from './harness.js';

// BENCH_SMOKE=1: one round of 200 records per column.
const RECORDS = Number(process.env.BENCH_SCHEMA_RECORDS ?? smokeOr(5000, 200));
const ROUNDS = Number(process.env.BENCH_SCHEMA_ROUNDS ?? smokeOr(7, 1));
const WARM_UP = smokeOr(2000, 50);

const ORDER = {
  id: 'order-000123',
  customer: 'customer-42',
  quantity: 3,
  amount: 129.95,
  paid: true,
  lines: [
    { sku: 'sku-1', quantity: 1 },
    { sku: 'sku-2', quantity: 2 },
  ],
};
/** Avro's field list from `{name: type}`. */
function avroFields(types: Record<string, unknown>) {
  return Object.entries(types).map(([name, type]) => ({ name, type }));
}

const SCHEMAS = {
  AVRO: JSON.stringify({
    type: 'record',
    name: 'Order',
    namespace: 'bench',
    fields: avroFields({
      id: 'string',
      customer: 'string',
      quantity: 'int',
      amount: 'double',
      paid: 'boolean',
      lines: {
        type: 'array',
        items: {
          type: 'record',
          name: 'Line',
          fields: avroFields({ sku: 'string', quantity: 'int' }),
        },
      },
    }),
  }),
  PROTOBUF: `syntax = "proto3";
package bench;
message Order {
  string id = 1; string customer = 2; int32 quantity = 3; double amount = 4; bool paid = 5;
  repeated Line lines = 6;
}
message Line { string sku = 1; int32 quantity = 2; }
`,
  JSON: JSON.stringify({
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      id: { type: 'string' },
      customer: { type: 'string' },
      quantity: { type: 'integer' },
      amount: { type: 'number' },
      paid: { type: 'boolean' },
      lines: {
        type: 'array',
        items: {
          type: 'object',
          properties: { sku: { type: 'string' }, quantity: { type: 'integer' } },
          required: ['sku', 'quantity'],
        },
      },
    },
    required: ['id', 'customer', 'quantity', 'amount', 'paid', 'lines'],
  }),
} as const;
const IDS = { AVRO: 1, PROTOBUF: 2, JSON: 3 } as const;
type Registered = keyof typeof IDS;

/**
 * The Confluent API's GET /schemas/ids/{id}, answered in process, and its lookup under a subject
 * (POST /subjects/{subject}: each id is version 1 of the bench topic's subject).
 */
const registryFetch: typeof fetch = async (input) => {
  if (/\/subjects\/bench-value$/.test(String(input)))
    return new Response('{"version":1}', { status: 200 });
  const id = Number(/\/schemas\/ids\/(\d+)$/.exec(String(input))?.[1]);
  const type = (Object.keys(IDS) as Registered[]).find((t) => IDS[t] === id);
  if (type === undefined) return new Response('{"error_code":40403}', { status: 404 });
  const body = { schema: SCHEMAS[type], ...(type !== 'AVRO' && { schemaType: type }) };
  return new Response(JSON.stringify(body), { status: 200 });
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;
const round1 = (n: number) => Math.round(n * 10) / 10;

const importStarted = performance.now();
const { createRegistryEncoder } = await import(
  '../functions/adapters/schema-registry/record-encoder.js'
);
const importMs = performance.now() - importStarted;
const encoder = createRegistryEncoder({ url: 'http://registry.bench', fetch: registryFetch });
const part = (type: Registered): SchemaPart => ({
  schema: { id: IDS[type], subject: { strategy: 'TOPIC_NAME' } },
  data: ORDER,
  field: 'value',
  role: 'value',
});

// The first record of each type: the registry's answer and the schema's compile.
const firstRecordMs: Record<string, number> = {};
const sizes: Record<string, number> = { JSON: Buffer.byteLength(JSON.stringify(ORDER)) };
for (const type of Object.keys(IDS) as Registered[]) {
  const started = performance.now();
  const { bytes } = await encoder.encode(part(type), 'bench');
  firstRecordMs[type] = round1(performance.now() - started);
  sizes[type === 'JSON' ? 'JSONSCHEMA' : type] = bytes?.length ?? 0;
}

const columns: Record<string, () => Promise<unknown>> = {
  plainJson: async () => Buffer.from(JSON.stringify(ORDER), 'utf8'),
  avro: () => encoder.encode(part('AVRO'), 'bench'),
  protobuf: () => encoder.encode(part('PROTOBUF'), 'bench'),
  jsonSchema: () => encoder.encode(part('JSON'), 'bench'),
};
const micros: Record<string, number[]> = Object.fromEntries(
  Object.keys(columns).map((name) => [name, []]),
);
for (const run of Object.values(columns)) for (let i = 0; i < WARM_UP; i++) await run(); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(columns)) {
    const started = performance.now();
    for (let i = 0; i < RECORDS; i++) await run();
    micros[name]?.push(((performance.now() - started) * 1000) / RECORDS);
  }
}
const perRecordMicros = Object.fromEntries(
  Object.entries(micros).map(([name, values]) => [name, round1(median(values))]),
);
const plain = perRecordMicros.plainJson ?? 0;
const rows: Array<[string, string, number | undefined, number | undefined]> = [
  ['plain JSON (type JSON)', 'plainJson', sizes.JSON, undefined],
  ['Avro, by schema_id', 'avro', sizes.AVRO, firstRecordMs.AVRO],
  ['Protobuf, by schema_id', 'protobuf', sizes.PROTOBUF, firstRecordMs.PROTOBUF],
  ['JSON Schema, by schema_id', 'jsonSchema', sizes.JSONSCHEMA, firstRecordMs.JSON],
];
const table = [
  '| record | µs per record (median) | × plain JSON | bytes written | first record (ms) |',
  '|---|---:|---:|---:|---:|',
  ...rows.map(([label, key, size, first]) => {
    const value = perRecordMicros[key] ?? 0;
    return `| ${label} | ${value} | ${plain > 0 ? round1(value / plain) : '–'} | ${size ?? '–'} | ${first ?? '–'} |`;
  }),
].join('\n');
note(
  `per record (median of ${ROUNDS} rounds of ${RECORDS}): ${Object.entries(perRecordMicros)
    .map(([k, v]) => `${k} ${v} µs`)
    .join(' · ')}; codecs imported in ${round1(importMs)} ms`,
);
const summary = {
  at: new Date().toISOString(),
  records: RECORDS,
  rounds: ROUNDS,
  perRecordMicros,
  bytesWritten: sizes,
  firstRecordMs,
  codecsImportMs: round1(importMs),
  machine: machineFacts(),
};
// Not saved in bench/results (as before): bench/run.ts collects it.
writeResults(
  'schema',
  summary,
  `${table}\n\nThe codecs' module (avsc, protobufjs, ajv) imported in ${round1(importMs)} ms (under tsx, unbundled); the first record of each schema adds the registry's answer (in process here) and the schema's compile.`,
  false,
);
