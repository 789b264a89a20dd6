import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { waitForDynamoDb, waitForKafka } from '../../infra/local/readiness.js';
import { descendants, isAlive, spawnTs, waitFor, watchLines } from '../helpers/processes.js';

// Each case starts a stack of its own (a real broker and DynamoDB API) and ends it another way.
// `npm start` on services it is given: reconcile-local-schedule.test.ts.
const READY =
  /^tally ready: kafka=127\.0\.0\.1:\d+ dynamodb=http:\/\/127\.0\.0\.1:\d+ api=http:\/\/127\.0\.0\.1:\d+ state-machines=http:\/\/127\.0\.0\.1:\d+\/local\/state-machines token=tally-local-[\w-]{32}$/;
const START = 'infra/local/start.ts';

function ownServicesEnv(): NodeJS.ProcessEnv {
  const { KAFKA_BROKERS: _k, DYNAMODB_ENDPOINT: _d, ...env } = process.env;
  return env;
}

async function startLauncher(env: NodeJS.ProcessEnv = ownServicesEnv()) {
  const child = spawnTs(START, env);
  const stdout = watchLines(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  // A stack starts in ~40 s on a quiet machine; beside a second suite (load 12-24) three starts
  // passed 150 s. The wait ends a start that hangs, inside the test's limit.
  const ready = await stdout.next(/^tally ready:/, 480_000).catch((error: unknown) => {
    throw new Error(`${String(error)}\nlauncher stderr:\n${stderr}`);
  });
  expect(ready).toMatch(READY);
  const [, kafka = '', dynamodb = ''] = /kafka=(\S+) dynamodb=(\S+)/.exec(ready) ?? [];
  const stateMachines = /state-machines=(\S+)/.exec(ready)?.[1] ?? '';
  // Every route needs the printed bearer token.
  const api = /api=(\S+)/.exec(ready)?.[1] ?? '';
  const token = /token=(\S+)/.exec(ready)?.[1] ?? '';
  const anonymous = await fetch(`${api}/v3/clusters`);
  expect(anonymous.status).toBe(401);
  expect(await anonymous.json()).toMatchObject({ error_code: 401, field: 'Authorization' });
  const known = await fetch(`${api}/v3/clusters`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(known.status).toBe(200);
  expect(await (await fetch(stateMachines)).json()).toEqual({
    stateMachines: ['audit-fan-out', 'offset-repair', 'publish-and-verify', 'reconcile-fan-out'],
  });
  // A Task state calls a function through serverless-offline, and its error keeps its name.
  const started = (await (
    await fetch(`${stateMachines}/offset-repair/executions`, {
      method: 'POST',
      body: JSON.stringify({ group: '' }),
    })
  ).json()) as { location: string };
  const url = new URL(started.location, stateMachines).href;
  type Seen = { status: string; error?: string; history: Array<Record<string, string>> };
  let execution: Seen | undefined;
  await waitFor(
    'the execution to end',
    () => execution !== undefined && execution.status !== 'RUNNING',
    60_000,
    async () => {
      execution = (await (await fetch(url)).json()) as Seen;
    },
  );
  expect(execution).toMatchObject({ status: 'FAILED', error: 'RepairFailed' });
  expect(execution?.history).toContainEqual(
    expect.objectContaining({
      type: 'StateFailed',
      state: 'PlanRepair',
      error: 'InvalidInputError',
    }),
  );
  await waitForKafka(kafka, { timeoutMs: 5000 });
  await waitForDynamoDb(dynamodb, { timeoutMs: 5000 });
  const services = descendants(child.pid as number);
  const java = services.filter((p) => p.command.includes('kafka.Kafka'));
  const dynalite = services.filter((p) => p.command.includes('dynalite'));
  expect(java).toHaveLength(1);
  expect(dynalite).toHaveLength(1);
  return { child, stdout, services };
}

function exitOf(child: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve([child.exitCode, child.signalCode]);
  }
  return once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
}

// A launcher starts Kafka, DynamoDB and serverless-offline (which bundles every function):
// on a busy 2-core machine that alone can take a minute.
describe('local stack lifecycle', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`prints one ready line and, on ${signal} (sent twice, as npm forwards it), stops Kafka and DynamoDB, removes its folder and exits 0`, async () => {
      // A temp dir of its own: the stack's tally-stack-* folder must be gone after the exit.
      const tmp = mkdtempSync(join(tmpdir(), 'tally-lifecycle-'));
      onTestFinished(() => rmSync(tmp, { recursive: true, force: true }));
      const { child, stdout, services } = await startLauncher({ ...ownServicesEnv(), TMPDIR: tmp });
      expect(readdirSync(tmp).filter((name) => name.startsWith('tally-stack-'))).toHaveLength(1);
      // A kill of `npm start`'s process group reaches the launcher, and npm forwards it again.
      child.kill(signal);
      await new Promise((resolve) => setTimeout(resolve, 100));
      child.kill(signal);
      expect(await exitOf(child)).toEqual([0, null]);
      expect(readdirSync(tmp).filter((name) => name.startsWith('tally-stack-'))).toEqual([]);
      expect(stdout.lines.filter((line) => line.startsWith('tally ready'))).toHaveLength(1);
      // The launcher waits for Kafka and DynamoDB before it exits; helpers of theirs (watchdogs,
      // serverless-offline's esbuild service) notice soon after.
      const javaAndDynamoDb = services.filter((p) => /kafka\.Kafka|dynalite/.test(p.command));
      expect(javaAndDynamoDb.filter((p) => isAlive(p.pid))).toEqual([]);
      await waitFor(
        'all its processes to exit',
        () => services.every((p) => !isAlive(p.pid)),
        10_000,
      );
    });
  }

  it('leaves no java process and no bundles behind when the launcher is killed outright', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'tally-lifecycle-'));
    onTestFinished(() => rmSync(tmp, { recursive: true, force: true }));
    const { child, services } = await startLauncher({ ...ownServicesEnv(), TMPDIR: tmp });
    // The local API's bundles are its own (.esbuild/local/<stack folder>): the watchdog that
    // ends serverless-offline removes them, as stop() would have.
    const [stack] = readdirSync(tmp).filter((name) => name.startsWith('tally-stack-'));
    const bundles = new URL(`../../.esbuild/local/${stack}`, import.meta.url).pathname;
    expect(existsSync(bundles)).toBe(true);
    child.kill('SIGKILL');
    await exitOf(child);
    await waitFor(
      'services of a killed launcher to stop',
      () => services.every((service) => !isAlive(service.pid)),
      20_000,
    );
    await waitFor('its bundles to be removed', () => !existsSync(bundles), 20_000);
  });

  it('stops its services when the process that started it exits without stopping it', async () => {
    const child = spawnTs('test/fixtures/exit-without-stop.ts', ownServicesEnv());
    const line = await watchLines(child).next(/^\[/, 90_000);
    const pids: unknown = JSON.parse(line);
    expect(Array.isArray(pids) && pids.length === 2).toBe(true);
    expect(await exitOf(child)).toEqual([0, null]);
    await waitFor(
      'services of an exited process to stop',
      () => (pids as number[]).every((pid) => !isAlive(pid)),
      5_000,
    );
  });
});
