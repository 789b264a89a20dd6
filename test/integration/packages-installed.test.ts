import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import { transform } from 'esbuild';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createReceiptsStore } from '../../functions/adapters/dynamodb/receipts-store.js';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import type { BucketRow } from '../../functions/core/audit/stream-audit.js';
import type { ReceiptBatch } from '../../functions/core/receipts/msk-receipts.js';
import { localDynamoDbClient, tableEnvironment } from '../../infra/local/local-tables.js';
import { testKafka } from '../helpers/kafka.js';
import { mskRecord } from '../helpers/msk-event.js';
import { type NpmStartStack, startNpmStart } from '../helpers/npm-start.js';
import { createTopic, readBack } from '../helpers/publish-client.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 30's "done when": the packages as a team gets them, run against the stack a user gets
// from `npm start`. Each package is packed (`npm pack`, which builds it) and the tarballs are
// installed by npm into a fresh project outside the repository (its other dependencies pinned to
// the repository's versions, so npm's cache serves them), while `npm start` starts (the test
// run's broker, a DynamoDB API of its own, serverless-offline serving every function from
// .esbuild/). Then the project's programs run against the URLs, token and tables it prints: the
// client publishes (stream and batch) and looks a record up; an MSK-triggered handler built with
// tallyOnce and the DynamoDB stores gets the records twice (a redelivery); a plain kafkajs
// consumer posts its receipts over HTTP; and each README example runs as written, only its
// placeholders filled. The receipts stored, the suppression and the audit's view of each group
// (through the stack's HTTP audit route) are checked; last, the stack stops on SIGTERM.

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

interface Packed {
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: string[];
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

/** Both packages packed into `work` and installed in `project`, with its programs written. */
async function installProject(work: string, project: string): Promise<Record<string, Packed>> {
  const sizes: Record<string, Packed> = {};
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
  return sizes;
}

// npm start's serverless-offline bundles every function before it answers: on a busy 2-core
// machine, a minute or more (npm pack and npm install run meanwhile).
describe('the packages, packed and installed in a fresh project, against npm start', () => {
  const admin: Admin = testKafka('tally-test-packages').admin();
  let work: string;
  let project: string;
  let stack: NpmStartStack;
  let documents: DynamoDBDocumentClient;
  let sizes: Record<string, Packed>;

  beforeAll(async () => {
    await admin.connect();
    work = await mkdtemp(join(tmpdir(), 'tally-packages-'));
    project = join(work, 'team-project');
    const started = startNpmStart({ kafkaBrokers: inject('kafkaBrokers') });
    // Whichever fails first, the other is still awaited: no stack left running, no npm child.
    const [stackResult, installResult] = await Promise.allSettled([
      started,
      installProject(work, project),
    ]);
    if (stackResult.status === 'fulfilled') stack = stackResult.value;
    if (stackResult.status === 'rejected') throw stackResult.reason;
    if (installResult.status === 'rejected') throw installResult.reason;
    sizes = installResult.value;
    documents = DynamoDBDocumentClient.from(localDynamoDbClient(stack.dynamodb));
  });

  afterAll(async () => {
    await stack?.stop();
    documents?.destroy();
    await admin.disconnect();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** What a program of the team's project gets: what npm start printed, and its tables. */
  const programEnv = () => ({
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    KAFKA_BROKERS: stack.kafka,
    DYNAMODB_ENDPOINT: stack.dynamodb,
    ...tableEnvironment(stack.tables),
    TALLY_URL: stack.api,
    TALLY_TOKEN: stack.token,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    // The README's clients are built with no endpoint, as in Lambda: the SDK's own setting.
    AWS_ENDPOINT_URL_DYNAMODB: stack.dynamodb,
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
  /** The receipts in npm start's receipts table, read with the functions' own store. */
  const storedReceipts = async (group: string, topic: string) => {
    const batches: ReceiptBatch[] = [];
    const store = createReceiptsStore(documents, stack.tables.ReceiptsTable as string);
    await store.forEachBatch(group, topic, (b) => batches.push(b));
    return batches;
  };
  /** POST /v3/clusters/{cluster_id}/audits on npm start's API: each group's bucket totals. */
  const auditTotals = async (topic: string, groups: string[]) => {
    const answer = await fetch(`${stack.api}/v3/clusters/${stack.clusterId}/audits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ topic, groups }),
    });
    const text = await answer.text();
    expect(answer.status, text).toBe(200);
    const [stream] = (JSON.parse(text) as AuditReport).streams;
    expect(stream?.stream).toBe(topic);
    const total = (
      group: string,
      pick: (b: BucketRow) => Readonly<Record<string, number>> | undefined,
    ) => (stream?.buckets ?? []).reduce((n, b) => n + (pick(b)?.[group] ?? 0), 0);
    return Object.fromEntries(
      groups.map((group) => [
        group,
        {
          processed: total(group, (b) => b.processed),
          redelivered: total(group, (b) => b.redelivered),
          suppressed: total(group, (b) => b.suppressed),
          actedTwice: total(group, (b) => b.actedTwice),
        },
      ]),
    );
  };
  const mskEvent = (topic: string, records: Awaited<ReturnType<typeof readBack>>): MSKEvent => ({
    eventSource: 'aws:kafka',
    eventSourceArn: 'arn:aws:kafka:eu-west-1:123456789012:cluster/local/1',
    bootstrapServers: stack.kafka,
    records: { [`${topic}-0`]: records.map((r) => mskRecord(topic, r)) },
  });

  it('installs with types, and runs the client, an MSK Lambda handler and a kafkajs consumer', async () => {
    // npm start on the test run's broker, with tables of its own.
    expect(stack.kafka).toBe(inject('kafkaBrokers'));
    expect(stack.clusterId).toBe(inject('kafkaClusterId'));
    expect(stack.dynamodb).not.toBe(inject('dynamodbEndpoint'));
    expect(stack.tables.ReceiptsTable).toBe('kafka-tally-local-receipts');
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

    const lambdaGroup = uniqueName('pkg-lambda');
    const kafkajsGroup = uniqueName('pkg-kafkajs');
    const topic = await createTopic(admin, 1);
    const published = await program('publish.mjs', { TOPIC: topic });
    expect(published.clusterId).toBe(stack.clusterId);
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
    await writeFile(join(project, 'event.json'), JSON.stringify(mskEvent(topic, records)));
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
    // Posted to npm start's receipts route, stored in its table.
    expect((await stored(kafkajsGroup)).flatMap((b) => b.seqs)).toEqual([[1, 6]]);

    // The audit sees both groups: everything processed, the redelivery and its suppression.
    expect(await auditTotals(topic, [lambdaGroup, kafkajsGroup])).toEqual({
      [lambdaGroup]: { processed: 6, redelivered: 6, suppressed: 6, actedTwice: 0 },
      [kafkajsGroup]: { processed: 6, redelivered: 0, suppressed: 0, actedTwice: 0 },
    });
  });

  it('runs each README example as written, only its placeholders filled', async () => {
    // The READMEs' TypeScript blocks type-check in the team's project (tsc above includes them).
    const topic = await createTopic(admin, 1);
    const base = { TOPIC: topic, TALLY_CLUSTER_ID: stack.clusterId };

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
    await writeFile(join(project, 'readme-event.json'), JSON.stringify(mskEvent(topic, records)));
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
      env: { ...programEnv(), ...base, ONCE_TABLE: stack.tables.OnceTable ?? '' },
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
    expect(await auditTotals(topic, ['billing', group])).toEqual({
      billing: { processed: 3, redelivered: 3, suppressed: 3, actedTwice: 0 },
      [group]: { processed: 3, redelivered: 0, suppressed: 0, actedTwice: 0 },
    });
  });

  it('stops on SIGTERM to its process group: exit 0, its processes gone, its folder removed', async () => {
    expect(stack.stackFolders()).toHaveLength(1);
    // What must be gone after: its DynamoDB API and serverless-offline at least.
    expect(stack.processes.some((p) => p.includes('dynalite-server.ts'))).toBe(true);
    expect(stack.processes.some((p) => p.includes('serverless.js offline start'))).toBe(true);
    expect(await stack.stop()).toEqual({ exit: [0, null], foldersLeft: [], processesLeft: [] });
  });
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
