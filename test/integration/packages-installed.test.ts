import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { APIGatewayProxyEventV2, Context, MSKEvent } from 'aws-lambda';
import { transform } from 'esbuild';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BucketRow } from '../../functions/core/audit/stream-audit.js';
import type { ReceiptBatch } from '../../functions/core/receipts/msk-receipts.js';
import { auditNow } from '../helpers/audit-client.js';
import { httpEvent, lambdaContext, TEST_TOKEN } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { mskRecord } from '../helpers/msk-event.js';
import { createTopic, readBack } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// The packages as a team gets them: each packed (`npm pack`, which builds it), the tarballs
// installed by npm into a fresh project outside the repository (its other dependencies pinned
// to the repository's versions, so npm's cache serves them), and three programs of that project
// run against the test stack's Kafka and DynamoDB and Tally's handlers behind a local HTTP
// server: the client publishes (stream and batch) and looks a record up; an MSK-triggered handler
// built with tallyOnce and the DynamoDB stores gets the records twice (a redelivery); a plain
// kafkajs consumer posts its receipts over HTTP. Then the receipts, the suppression and the
// audit's view of both groups are checked.

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const PINNED = [
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/lib-dynamodb',
  '@aws-sdk/util-dynamodb',
  '@middy/core',
  '@types/aws-lambda',
  '@types/node',
  'kafkajs',
];

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;
interface Route {
  readonly method: string;
  readonly template: string;
  readonly pattern: RegExp;
  readonly handler: Handler;
}

/** Tally's HTTP routes the programs use, each event built as API Gateway builds it. */
async function serveTally(): Promise<{ url: string; server: Server }> {
  const route = (method: string, template: string, handler: Handler): Route => ({
    method,
    template,
    handler,
    pattern: new RegExp(
      `^${template.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)').replace(/[.:]/g, '\\$&')}$`,
    ),
  });
  const routes = [
    route(
      'GET',
      '/v3/clusters',
      (await import('../../functions/publish/clusters-handler.js')).handler,
    ),
    route(
      'POST',
      '/v3/clusters/{cluster_id}/topics/{topic_name}/records',
      (await import('../../functions/publish/produce-handler.js')).handler,
    ),
    route(
      'POST',
      '/v3/clusters/{cluster_id}/topics/{topic_name}/records:batch',
      (await import('../../functions/publish/batch-handler.js')).handler,
    ),
    route(
      'GET',
      '/v3/clusters/{cluster_id}/records/lookup',
      (await import('../../functions/publish/lookup-handler.js')).handler,
    ),
    route(
      'POST',
      '/v3/clusters/{cluster_id}/receipts',
      (await import('../../functions/receipts/http-handler.js')).handler,
    ),
  ];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const path = decodeURIComponent(url.pathname);
      const found = routes
        .map((r) => ({ r, m: r.method === req.method ? r.pattern.exec(path) : null }))
        .find(({ m }) => m !== null);
      if (found === undefined) {
        res.writeHead(404).end('{"message":"no such route in this test"}');
        return;
      }
      const routeKey = `${found.r.method} ${found.r.template}`;
      const query = Object.fromEntries(url.searchParams);
      const event = httpEvent({
        routeKey,
        pathParameters: { ...found.m?.groups },
        headers: Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [
            k,
            Array.isArray(v) ? v.join(',') : (v ?? ''),
          ]),
        ),
        ...(Object.keys(query).length > 0 && { query }),
        ...(chunks.length > 0 && { body: Buffer.concat(chunks).toString() }),
      });
      const answer = (await found.r.handler(
        {
          ...event,
          rawPath: url.pathname,
          requestContext: {
            ...event.requestContext,
            http: { ...event.requestContext.http, method: found.r.method, path: url.pathname },
          },
        },
        lambdaContext(),
      )) as { statusCode: number; headers?: Record<string, string>; body?: string };
      res.writeHead(answer.statusCode, answer.headers ?? {}).end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** `npm pack` of a workspace package into `into`: the tarball's path and npm's size figures. */
async function pack(name: string, into: string) {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', into], {
    cwd: join(ROOT, 'packages', name),
  });
  // npm prints prepack's output before the JSON.
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{
    filename: string;
    size: number;
    unpackedSize: number;
    files: Array<{ path: string }>;
  }>;
  if (!info) throw new Error(`npm pack ${name}: no JSON`);
  return { ...info, tarball: join(into, info.filename.replace(/^@/, '').replace('/', '-')) };
}

describe('the packages, packed and installed in a fresh project', () => {
  const admin: Admin = testKafka('tally-test-packages').admin();
  let work: string;
  let project: string;
  let tally: { url: string; server: Server };
  let env: Record<string, string>;
  let lambdaGroup: string;
  let kafkajsGroup: string;
  const sizes: Record<string, { size: number; unpackedSize: number; files: string[] }> = {};

  beforeAll(async () => {
    lambdaGroup = uniqueName('pkg-lambda');
    kafkajsGroup = uniqueName('pkg-kafkajs');
    env = await usePublishEnv({ TALLY_RECEIPTS_GROUP: lambdaGroup });
    await admin.connect();
    tally = await serveTally();
    work = await mkdtemp(join(tmpdir(), 'tally-packages-'));
    project = join(work, 'team-project');
    const tarballs = [];
    for (const name of ['consumer', 'client']) {
      const packed = await pack(name, work);
      sizes[name] = {
        size: packed.size,
        unpackedSize: packed.unpackedSize,
        files: packed.files.map((f) => f.path),
      };
      tarballs.push(packed.tarball);
    }
    const pinned = await Promise.all(
      PINNED.map(async (name) => {
        const manifest = JSON.parse(
          await readFile(join(ROOT, 'node_modules', name, 'package.json'), 'utf8'),
        ) as { version: string };
        return `${name}@${manifest.version}`;
      }),
    );
    await run('mkdir', ['-p', project]);
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'team-project', private: true, type: 'module' }),
    );
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        ...tarballs,
        ...pinned,
      ],
      { cwd: project, timeout: 120_000 },
    );
    for (const [file, text] of Object.entries(PROGRAMS)) await writeFile(join(project, file), text);
    for (const example of readmeExamples()) {
      await writeFile(join(project, `${example.name}.ts`), example.code);
      const { code } = await transform(example.code, { loader: 'ts', format: 'esm' });
      await writeFile(join(project, `${example.name}.mjs`), code);
    }
  }, 150_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => tally?.server.close(() => resolve()));
    await admin.disconnect();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** What a program of the team's project gets: the stack's endpoints, tables and Tally's URL. */
  const programEnv = () => ({
    PATH: process.env.PATH ?? '',
    ...env,
    TALLY_URL: tally.url,
    TALLY_TOKEN: TEST_TOKEN,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    // The README's clients are built with no endpoint, as in Lambda: the SDK's own setting.
    AWS_ENDPOINT_URL_DYNAMODB: env.DYNAMODB_ENDPOINT ?? '',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  });
  const program = async (file: string, extra: Record<string, string> = {}) => {
    const { stdout } = await run(process.execPath, [file], {
      cwd: project,
      timeout: 60_000,
      env: { ...programEnv(), ...extra },
    });
    return JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
  };
  const storedReceipts = async (group: string, topic: string) => {
    const { receiptsRuntime } = await import('../../functions/receipts/runtime.js');
    const batches: ReceiptBatch[] = [];
    await (await receiptsRuntime()).store.forEachBatch(group, topic, (b) => batches.push(b));
    return batches;
  };

  it('installs with types, and runs the client, an MSK Lambda handler and a kafkajs consumer', async () => {
    // What npm packed: the bundle, its declarations, the README; no sources, no tests.
    for (const name of ['consumer', 'client']) {
      expect(sizes[name]?.files).toEqual(
        expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'README.md', 'package.json']),
      );
      expect(
        sizes[name]?.files.some(
          (f) => f.startsWith('src/') || (f.endsWith('.ts') && !f.endsWith('.d.ts')),
        ),
      ).toBe(false);
    }
    console.info(
      'packed sizes (bytes):',
      JSON.stringify(sizes, (k, v) => (k === 'files' ? undefined : v)),
    );
    // The team's TypeScript sees the packages' types (tsc from the repository, the project's
    // node_modules only).
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], {
      cwd: project,
    });

    const topic = await createTopic(admin, 1);
    const published = await program('publish.mjs', { TOPIC: topic });
    expect(published.clusterId).toBe(inject('kafkaClusterId'));
    expect(
      published.stream.records.map((r: { outcome: string; seq: number }) => [r.outcome, r.seq]),
    ).toEqual([
      ['ACKED', 1],
      ['ACKED', 2],
      ['ACKED', 3],
      ['ACKED', 4],
    ]);
    expect(
      published.batch.records.map((r: { id: string; outcome: string }) => [r.id, r.outcome]),
    ).toEqual([
      ['a', 'ACKED'],
      ['b', 'ACKED'],
    ]);
    // The key's four records, as the ledger has them.
    expect(
      published.lookup.records.map((r: { outcome: string; seq: number }) => [r.outcome, r.seq]),
    ).toEqual([
      ['ACKED', 1],
      ['ACKED', 2],
      ['ACKED', 3],
      ['ACKED', 4],
    ]);
    expect(published.neverAllocated.found).toBe(false);

    // The MSK event source's batch, delivered twice (a redelivery, as after a failed commit).
    const records = await readBack(topic, 6);
    const event: MSKEvent = {
      eventSource: 'aws:kafka',
      eventSourceArn: 'arn:aws:kafka:eu-west-1:123456789012:cluster/local/1',
      bootstrapServers: inject('kafkaBrokers'),
      records: { [`${topic}-0`]: records.map((r) => mskRecord(topic, r)) },
    };
    await writeFile(join(project, 'event.json'), JSON.stringify(event));
    const lambda = await program('lambda.mjs', { GROUP: lambdaGroup });
    expect(lambda.answers).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    expect(lambda.acted).toEqual([1, 2, 3, 4, 5, 6]);

    const plain = await program('kafkajs-consumer.mjs', {
      GROUP: kafkajsGroup,
      TOPIC: topic,
      EXPECT: '6',
    });
    expect(plain.seqs).toEqual([1, 2, 3, 4, 5, 6]);

    const stored = (group: string) => storedReceipts(group, topic);
    const common = { group: lambdaGroup, stream: topic, topic, offsets: [[0, 0, 5]], count: 6 };
    const lambdaReceipts = await stored(lambdaGroup);
    expect(lambdaReceipts).toHaveLength(2);
    expect(lambdaReceipts).toContainEqual({ ...common, seqs: [[1, 6]] });
    // The redelivery: suppressed by tallyOnce, receipted as such.
    expect(lambdaReceipts).toContainEqual({ ...common, seqs: [], suppressed: [[1, 6]] });
    expect((await stored(kafkajsGroup)).flatMap((b) => b.seqs)).toEqual([[1, 6]]);

    // The audit sees both groups: everything processed, the redelivery and its suppression.
    const [stream] = (await auditNow(topic, [lambdaGroup, kafkajsGroup])).streams;
    const total = (
      group: string,
      pick: (b: BucketRow) => Readonly<Record<string, number>> | undefined,
    ) => (stream?.buckets ?? []).reduce((n, b) => n + (pick(b)?.[group] ?? 0), 0);
    expect(total(lambdaGroup, (b) => b.processed)).toBe(6);
    expect(total(lambdaGroup, (b) => b.redelivered)).toBe(6);
    expect(total(lambdaGroup, (b) => b.suppressed)).toBe(6);
    expect(total(lambdaGroup, (b) => b.actedTwice)).toBe(0);
    expect(total(kafkajsGroup, (b) => b.processed)).toBe(6);
  }, 120_000);

  it('runs each README example as written, only its placeholders filled', async () => {
    // The READMEs' TypeScript blocks type-check in the team's project (tsc above includes them).
    const topic = await createTopic(admin, 1);
    const base = { TOPIC: topic, TALLY_CLUSTER_ID: inject('kafkaClusterId') };

    // The client's example: a keyed produce, a batch, a lookup; it prints each ACKED place.
    const { stdout } = await run(process.execPath, ['readme-client-1.mjs'], {
      cwd: project,
      timeout: 60_000,
      env: { ...programEnv(), ...base },
    });
    expect(stdout.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^${topic}#1 at 0@0$`)),
    ]);
    const records = await readBack(topic, 3);
    expect(records.map((r) => r.headers?.['tally.seq']?.toString())).toEqual(['1', '2', '3']);

    // The MSK Lambda's example, its handler invoked twice with the same batch (a redelivery).
    const event: MSKEvent = {
      eventSource: 'aws:kafka',
      eventSourceArn: 'arn:aws:kafka:eu-west-1:123456789012:cluster/local/1',
      bootstrapServers: inject('kafkaBrokers'),
      records: { [`${topic}-0`]: records.map((r) => mskRecord(topic, r)) },
    };
    await writeFile(join(project, 'readme-event.json'), JSON.stringify(event));
    await writeFile(
      join(project, 'invoke-readme-consumer-1.mjs'),
      `import { readFileSync } from 'node:fs';
import { handler } from './readme-consumer-1.mjs';
const event = JSON.parse(readFileSync('readme-event.json', 'utf8'));
const context = { getRemainingTimeInMillis: () => 30000, awsRequestId: 'local' };
console.log(JSON.stringify([await handler(event, context), await handler(event, context)]));
`,
    );
    const invoked = await run(process.execPath, ['invoke-readme-consumer-1.mjs'], {
      cwd: project,
      timeout: 60_000,
      env: { ...programEnv(), ...base, ONCE_TABLE: env.TALLY_ONCE_TABLE ?? '' },
    });
    expect(JSON.parse(invoked.stdout.trim().split('\n').pop() ?? '')).toEqual([
      { batchItemFailures: [] },
      { batchItemFailures: [] },
    ]);
    const common = { group: 'billing', stream: topic, topic, offsets: [[0, 0, 2]], count: 3 };
    const billing = await storedReceipts('billing', topic);
    expect(billing).toHaveLength(2);
    expect(billing).toContainEqual({ ...common, seqs: [[1, 3]] });
    expect(billing).toContainEqual({ ...common, seqs: [], suppressed: [[1, 3]] });

    // The plain kafkajs consumer's example runs until stopped: it is stopped once its receipts
    // cover the three records.
    const group = uniqueName('readme-worker');
    const child = spawn(process.execPath, ['readme-consumer-2.mjs'], {
      cwd: project,
      env: { ...programEnv(), ...base, GROUP: group },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    try {
      await expect
        .poll(async () => (await storedReceipts(group, topic)).flatMap((b) => b.seqs), {
          timeout: 60_000,
          interval: 200,
        })
        .toEqual([[1, 3]]);
    } finally {
      child.kill('SIGTERM');
    }
    expect(stderr).not.toMatch(/Error/);
  }, 150_000);
});

/** What a README example needs filled before it runs here: each placeholder must be in it. */
const PLACEHOLDERS: Record<string, ReadonlyArray<readonly [string, string]>> = {
  client: [
    ["'https://<api-id>.execute-api.<region>.amazonaws.com'", 'process.env.TALLY_URL!'],
    ["'<a bearer token with the tally/publish scope>'", 'process.env.TALLY_TOKEN!'],
    ["'orders'", 'process.env.TOPIC!'],
  ],
  consumer: [
    ["['broker:9092']", "process.env.KAFKA_BROKERS!.split(',')"],
    ["'billing-worker'", 'process.env.GROUP!'],
    ["'https://<api-id>.execute-api.<region>.amazonaws.com'", 'process.env.TALLY_URL!'],
    ["'<GET /v3/clusters cluster_id>'", 'process.env.TALLY_CLUSTER_ID!'],
    ["'<a bearer token with the tally/receipts scope>'", 'process.env.TALLY_TOKEN!'],
    ["'orders'", 'process.env.TOPIC!'],
  ],
};

/** Every ```ts block of the packages' READMEs, placeholders filled, named `readme-<pkg>-<n>`. */
function readmeExamples(): Array<{ name: string; code: string }> {
  return Object.entries(PLACEHOLDERS).flatMap(([pkg, fills]) => {
    const text = readFileSync(join(ROOT, 'packages', pkg, 'README.md'), 'utf8');
    const blocks = [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
    const unused = new Set(fills.map(([from]) => from));
    const examples = blocks.map((block, i) => {
      let code = block;
      for (const [from, to] of fills) {
        if (code.includes(from)) unused.delete(from);
        code = code.replaceAll(from, to);
      }
      return { name: `readme-${pkg}-${i + 1}`, code };
    });
    if (unused.size > 0) {
      throw new Error(`packages/${pkg}/README.md no longer has ${[...unused].join(', ')}`);
    }
    return examples;
  });
}

// The team project's programs, as its README examples would have them.
const PROGRAMS: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      types: ['node'],
    },
    include: ['check-types.ts', 'readme-*.ts'],
  }),
  'check-types.ts': `
import { createTallyClient, type RecordOutcome, TallyRequestError } from '@kafka-tally/client';
import { createOnceStore, createReceiptsStore, eachRecord, tallyHeaders, tallyOnce, tallyOnceEach, tallyReceipts, type MskBatchResponse } from '@kafka-tally/consumer';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, Context, MSKEvent } from 'aws-lambda';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const documents = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = middy<MSKEvent, MskBatchResponse>()
  .use(tallyOnce({ group: 'g', store: createOnceStore(documents, 'once'), receipts: createReceiptsStore(documents, 'receipts') }))
  .handler(eachRecord(async (record) => { const seq: number | undefined = tallyHeaders(record).seq; void seq; }));
export const receiptsOnly = middy<MSKEvent>().use(tallyReceipts({ group: 'g', sink: createReceiptsStore(documents, 'r') })).handler(async () => {});
export async function publish(): Promise<string> {
  const client = createTallyClient({ baseUrl: 'http://localhost' });
  const { records } = await client.produce('orders', [{ value: { type: 'JSON', data: { n: 1 } } }]);
  const first: RecordOutcome | undefined = records[0];
  if (first?.outcome === 'ACKED') return \`\${first.partition}@\${first.offset}\`;
  const each = await tallyOnceEach({ group: 'g', store: createOnceStore(documents, 'once') }, [], async () => {});
  return String(each.retryFrom.length) + String(new TallyRequestError(503, {}, 1, undefined).retriable);
}
`,
  'publish.mjs': `
import { createTallyClient } from '@kafka-tally/client';
const client = createTallyClient({ baseUrl: process.env.TALLY_URL, token: process.env.TALLY_TOKEN });
const topic = process.env.TOPIC;
const stream = await client.produce(topic, ['a', 'b', 'c', 'd'].map((data) => ({ value: { type: 'STRING', data } })), { idempotencyKey: 'team-1' });
const batch = await client.produceBatch(topic, [{ id: 'a', value: { type: 'JSON', data: { n: 5 } } }, { id: 'b', value: { type: 'STRING', data: 'f' } }]);
const lookup = await client.lookup({ idempotencyKey: 'team-1' });
const neverAllocated = await client.lookup({ stream: topic, seq: 1000 });
console.log(JSON.stringify({ clusterId: await client.clusterId(), stream, batch, lookup, neverAllocated }));
`,
  'lambda.mjs': `
import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import { createOnceStore, createReceiptsStore, eachRecord, tallyHeaders, tallyOnce } from '@kafka-tally/consumer';

const documents = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: process.env.AWS_REGION, endpoint: process.env.DYNAMODB_ENDPOINT }),
  { marshallOptions: { removeUndefinedValues: true } },
);
const acted = [];
export const handler = middy()
  .use(tallyOnce({
    group: process.env.GROUP,
    store: createOnceStore(documents, process.env.TALLY_ONCE_TABLE),
    receipts: createReceiptsStore(documents, process.env.TALLY_RECEIPTS_TABLE),
  }))
  .handler(eachRecord(async (record) => { acted.push(tallyHeaders(record).seq); }));

const event = JSON.parse(readFileSync('event.json', 'utf8'));
const context = { getRemainingTimeInMillis: () => 30000, awsRequestId: 'local' };
const answers = [await handler(event, context), await handler(event, context)];
console.log(JSON.stringify({ answers, acted }));
`,
  'kafkajs-consumer.mjs': `
import { Kafka, logLevel } from 'kafkajs';
import { postReceipts, receiptBodies, tallyHeaders } from '@kafka-tally/consumer';

const kafka = new Kafka({ clientId: 'team', brokers: process.env.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({ groupId: process.env.GROUP, maxWaitTimeInMs: 200 });
const clusterId = (await (await fetch(process.env.TALLY_URL + '/v3/clusters', { headers: { authorization: 'Bearer ' + process.env.TALLY_TOKEN } })).json()).data[0].cluster_id;
const post = postReceipts({ baseUrl: process.env.TALLY_URL, clusterId, token: process.env.TALLY_TOKEN });
const seqs = [];
await consumer.connect();
await consumer.subscribe({ topic: process.env.TOPIC, fromBeginning: true });
await new Promise((resolve, reject) => {
  consumer.run({
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      // Work first, then the receipts, then the commit: a crash in between sends receipts twice
      // (a consumer-side duplicate the audit shows), never none.
      for (const message of batch.messages) seqs.push(tallyHeaders(message).seq);
      await post(receiptBodies(process.env.GROUP, batch.messages));
      for (const message of batch.messages) resolveOffset(message.offset);
      await heartbeat();
      if (seqs.length >= Number(process.env.EXPECT)) resolve();
    },
  }).catch(reject);
});
await consumer.disconnect();
console.log(JSON.stringify({ seqs }));
`,
};
