import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DynamoDbProxy, startDynamoDbProxy } from '../helpers/dynamodb-proxy.js';
import { descendants, type LineWatcher, spawnTs, watchLines } from '../helpers/processes.js';

// `npm start` with KAFKA_BROKERS and DYNAMODB_ENDPOINT set uses those services, and fires each
// schedule once per tick: one scheduler (infra/local/schedules.ts), not serverless-offline's as
// well. Counted by what every reconcile run does exactly once: one Scan of the offset history
// table, through a DynamoDB proxy only this stack's functions use.
describe('npm start on given services, and its schedules', () => {
  const kafka = inject('kafkaBrokers');
  let proxy: DynamoDbProxy;
  let child: ChildProcess;
  let stdout: LineWatcher;
  let stderr: LineWatcher;
  let ready = '';
  let readyAt = 0;
  let scansAtReady = 0;
  let historyTable = '';

  const scans = () =>
    proxy.calls.filter((c) => c.operation === 'Scan' && c.table === historyTable).length;

  beforeAll(async () => {
    proxy = await startDynamoDbProxy(inject('dynamodbEndpoint'));
    child = spawnTs('infra/local/start.ts', {
      ...process.env,
      KAFKA_BROKERS: kafka,
      DYNAMODB_ENDPOINT: proxy.endpoint,
    });
    stdout = watchLines(child);
    stderr = watchLines(child, 'stderr');
    // serverless-offline bundles every function first: on a busy 2-core machine, a minute or more.
    ready = await stdout.next(/^tally ready:/, 180_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\nlauncher stderr:\n${stderr.lines.join('\n')}`);
    });
    readyAt = Date.now();
    historyTable = (await stderr.next(/table OffsetHistoryTable: /, 1000)).split(': ')[1] ?? '';
    scansAtReady = scans();
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await proxy?.close();
  });

  it('prints a ready line naming the given services and starts no broker of its own', () => {
    expect(ready).toMatch(
      new RegExp(
        `^tally ready: kafka=${kafka} dynamodb=${proxy.endpoint} api=http://127\\.0\\.0\\.1:\\d+ state-machines=\\S+ token=\\S+$`,
      ),
    );
    expect(historyTable).not.toBe('');
    expect(descendants(child.pid as number).filter((p) => p.command.includes('java'))).toEqual([]);
  });

  it('runs reconcile once per tick of rate(1 minute), not twice', async () => {
    // The first tick comes a minute after the schedules start (just before the ready line). A
    // tick's line is logged once its run answered, so its Scan is counted by then. Counted at the
    // second tick's line, the window holds the whole first minute: a run serverless-offline's own
    // scheduler had started for it (had it been left on) would have scanned long before.
    const tick = /schedule kafka-tally-local-reconcile: /;
    const ticks = () => stderr.lines.filter((line) => tick.test(line));
    await stderr.next(tick, 150_000);
    const deadline = Date.now() + 150_000;
    while (ticks().length < 2) {
      if (Date.now() > deadline) throw new Error(`one tick in 150 s: ${ticks().join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const fired = ticks();
    expect(fired.length).toBeGreaterThanOrEqual(2);
    expect(
      scans() - scansAtReady,
      `${fired.join('\n')} in ${Date.now() - readyAt} ms after ready`,
    ).toBe(fired.length);
  });

  it('exits 0 on SIGTERM', async () => {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
  });
});
