import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descendants, isAlive, type LineWatcher, waitFor, watchLines } from './processes.js';

// `npm start` as a reader runs it: `node --import tsx infra/local/start.ts` (what the script
// execs) in a process group of its own, as a terminal's foreground job, with a TMPDIR of its own
// so that its tally-stack-* folder can be looked for after the stop. It starts its own DynamoDB
// API (dynalite), so every table starts empty, and serverless-offline (which bundles every
// function into the checkout's .esbuild/ first: on a busy 2-core machine, a minute or more).
// Kafka is the one given (the test run's broker), else a broker of its own.

const ROOT = new URL('../../', import.meta.url).pathname;

export interface NpmStartStack {
  /** The ready line's values. */
  readonly api: string;
  readonly kafka: string;
  readonly dynamodb: string;
  readonly token: string;
  readonly stateMachines: string;
  /** The first cluster_id of GET /v3/clusters, asked with the token. */
  readonly clusterId: string;
  /** Logical id → table name, from its `table <logical id>: <name>` lines. */
  readonly tables: Readonly<Record<string, string>>;
  readonly child: ChildProcess;
  readonly stdout: LineWatcher;
  readonly stderr: LineWatcher;
  /** The command lines of its processes once it was ready (dynalite, serverless-offline, …). */
  readonly processes: readonly string[];
  /** The tally-stack-* folders in its TMPDIR now (the stack's one while it runs). */
  stackFolders(): string[];
  /**
   * SIGTERM to its process group (Ctrl-C's way: every process of the stack gets it, the
   * launcher stops the rest), then waits for it to exit. Resolves with how it exited, the
   * tally-stack-* folders left in its TMPDIR and the processes of the stack still alive 10 s
   * later; its TMPDIR is removed afterwards either way.
   */
  stop(): Promise<StoppedStack>;
}

export interface StoppedStack {
  readonly exit: [number | null, NodeJS.Signals | null];
  readonly foldersLeft: string[];
  readonly processesLeft: string[];
}

export interface NpmStartOptions {
  /** KAFKA_BROKERS for the stack; without it, `npm start` starts a broker of its own. */
  readonly kafkaBrokers?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly readyTimeoutMs?: number;
}

export async function startNpmStart(options: NpmStartOptions = {}): Promise<NpmStartStack> {
  const tmp = mkdtempSync(join(tmpdir(), 'tally-npm-start-'));
  // The environment's DynamoDB (a test run's) is not the stack's: it starts dynalite itself.
  const { KAFKA_BROKERS: _k, DYNAMODB_ENDPOINT: _d, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts'], {
    cwd: ROOT,
    env: {
      ...inherited,
      TMPDIR: tmp,
      // Its serverless-offline may take minutes to bundle every function on a loaded machine.
      TALLY_LOCAL_API_START_SECONDS: '300',
      ...(options.kafkaBrokers !== undefined && { KAFKA_BROKERS: options.kafkaBrokers }),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, as a shell gives a foreground job.
    detached: true,
  });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve([child.exitCode, child.signalCode]);
    } else child.once('exit', (code, signal) => resolve([code, signal]));
  });
  const stdout = watchLines(child);
  const stderr = watchLines(child, 'stderr');
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch {
      // the group is gone already
    }
  };
  const fail = (error: unknown): never => {
    killGroup('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`${String(error)}\nnpm start's stderr:\n${stderr.lines.join('\n')}`);
  };

  const ready = await stdout.next(/^tally ready:/, options.readyTimeoutMs ?? 360_000).catch(fail);
  const field = (name: string) => new RegExp(`${name}=(\\S+)`).exec(ready)?.[1] ?? '';
  const tables = Object.fromEntries(
    stderr.lines
      .map((line) => /^\[tally\] table (\w+): (\S+)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1] as string, m[2] as string]),
  );
  const api = field('api');
  const token = field('token');
  const clusterId = await fetch(`${api}/v3/clusters`, {
    headers: { authorization: `Bearer ${token}` },
  })
    .then(async (r) => ((await r.json()) as { data: Array<{ cluster_id: string }> }).data[0])
    .then((first) => first?.cluster_id ?? '')
    .catch(fail);
  // Kafka's JVM, dynalite, serverless-offline and their helpers, as they were once ready.
  const started = descendants(child.pid as number);

  const stackFolders = () => readdirSync(tmp).filter((name) => name.startsWith('tally-stack-'));
  let stopped: Promise<StoppedStack> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      try {
        killGroup('SIGTERM');
        const exit = await Promise.race([
          exited,
          new Promise<never>((_, reject) =>
            setTimeout(
              () => reject(new Error('npm start: no exit within 30 s of SIGTERM')),
              30_000,
            ),
          ),
        ]).catch((error: unknown) => {
          killGroup('SIGKILL');
          throw error;
        });
        const foldersLeft = stackFolders();
        await waitFor(
          'the stack processes to exit',
          () => started.every((p) => !isAlive(p.pid)),
          10_000,
        ).catch(() => {});
        const processesLeft = started.filter((p) => isAlive(p.pid)).map((p) => p.command);
        return { exit, foldersLeft, processesLeft };
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    })();
    return stopped;
  };

  return {
    api,
    kafka: field('kafka'),
    dynamodb: field('dynamodb'),
    token,
    stateMachines: field('state-machines'),
    clusterId,
    tables,
    child,
    stdout,
    stderr,
    processes: started.map((p) => p.command),
    stackFolders,
    stop,
  };
}
