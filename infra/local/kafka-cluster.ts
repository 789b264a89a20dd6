import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { javaCommand, newClusterId, tail } from './kafka-broker.js';
import { resolveKafkaJars } from './kafka-jars.js';
import { ManagedProcess } from './managed-process.js';
import { freeLoopbackPort } from './ports.js';

// A replicated local Kafka cluster: N nodes, each its own `java` process on its own loopback
// ports and log dir, with a KRaft controller quorum of 1 or N (quorum nodes are broker and
// controller at once). The nemesis kills (SIGKILL), pauses (SIGSTOP/SIGCONT) and restarts nodes
// on their own data; the cluster answers which node leads which partition and which one is the
// active controller.

const CONFIG_DIR = fileURLToPath(new URL('./kafka/', import.meta.url));

export type NodeState = 'running' | 'paused' | 'killed';

export interface ClusterNode {
  readonly id: number;
  /** `127.0.0.1:<port>`: the PLAINTEXT listener. */
  readonly bootstrap: string;
  readonly isController: boolean;
  readonly dataDir: string;
  readonly logFile: string;
  /** The current JVM (a new one after `start`). */
  readonly process: ManagedProcess;
  readonly state: NodeState;
}

export interface PartitionPlacement {
  readonly partition: number;
  /** -1 when no replica leads it (no in-sync replica is up). */
  readonly leader: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
}

export interface KafkaCluster {
  /** Comma-separated bootstrap servers of every node. */
  readonly bootstrap: string;
  readonly clusterId: string;
  readonly nodes: readonly ClusterNode[];
  node(id: number): ClusterNode;
  /** SIGKILL, like a crashed host: no clean shutdown. */
  kill(id: number): Promise<void>;
  /** SIGSTOP: the JVM stops answering but keeps its sockets, like a long GC pause or a hung host. */
  pause(id: number): void;
  /** SIGCONT after `pause`. */
  resume(id: number): void;
  /** Starts a killed node again on its own log dir and ports (resumes a paused one). */
  start(id: number): Promise<void>;
  /** kill, then start. */
  restart(id: number): Promise<void>;
  /** Leader, replicas and ISR of each partition of `topic`, as the cluster's metadata says. */
  placements(topic: string): Promise<PartitionPlacement[]>;
  /**
   * The node that leads the KRaft quorum (the active controller), read from the quorum state
   * the controllers keep on disk; undefined when none has been elected.
   */
  activeController(): number | undefined;
  /**
   * Until every node is registered and answers (all running). A node whose JVM ended by itself
   * (a broker that cannot register with the quorum within 60 s exits) fails the wait, or, with
   * `revive`, is started again on its own data and reported through it.
   */
  waitUntilServing(timeoutMs: number, revive?: (id: number) => void): Promise<void>;
  /** Resumes paused nodes, stops every JVM. */
  stop(): Promise<void>;
}

export interface KafkaClusterOptions {
  /** Default 3. */
  readonly nodes?: number;
  /** Nodes in the controller quorum: 1 or all of them (default all). */
  readonly controllers?: number;
  /** Java heap per node (default 384m). */
  readonly heap?: string;
}

/**
 * TALLY_KAFKA_BROKERS_LOCAL: how many brokers the local stack starts (1, the default, or 3 for
 * the replicated cluster).
 */
export function localClusterSize(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.TALLY_KAFKA_BROKERS_LOCAL?.trim();
  if (!given || given === '1') return 1;
  if (given === '3') return 3;
  throw new Error(`TALLY_KAFKA_BROKERS_LOCAL must be 1 or 3, got "${given}"`);
}

function render(template: string, values: Record<string, string>): string {
  return template.replace(/\$\{([A-Z_]+)\}/g, (placeholder, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`cluster.properties: no value for ${placeholder}`);
    return value;
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface NodeSpec {
  readonly id: number;
  readonly brokerPort: number;
  readonly controllerPort: number | undefined;
  readonly dir: string;
  readonly propertiesFile: string;
}

/** Formats every node's log dir with one cluster id and starts the JVMs. */
export async function startKafkaCluster(
  workDir: string,
  options: KafkaClusterOptions = {},
): Promise<KafkaCluster> {
  const count = options.nodes ?? 3;
  const controllerCount = options.controllers ?? count;
  if (controllerCount !== 1 && controllerCount !== count) {
    throw new Error(`a controller quorum of 1 or ${count} nodes, not ${controllerCount}`);
  }
  const jars = await resolveKafkaJars();
  const specs: NodeSpec[] = [];
  for (let id = 1; id <= count; id++) {
    const dir = join(workDir, `node-${id}`);
    mkdirSync(dir, { recursive: true });
    specs.push({
      id,
      brokerPort: await freeLoopbackPort(),
      controllerPort: id <= controllerCount ? await freeLoopbackPort() : undefined,
      dir,
      propertiesFile: join(dir, 'server.properties'),
    });
  }
  const voters = specs
    .filter((s) => s.controllerPort !== undefined)
    .map((s) => `${s.id}@127.0.0.1:${s.controllerPort}`)
    .join(',');
  const template = readFileSync(join(CONFIG_DIR, 'cluster.properties'), 'utf8');
  for (const spec of specs) {
    writeFileSync(
      spec.propertiesFile,
      render(template, {
        ROLES: spec.controllerPort === undefined ? 'broker' : 'broker,controller',
        NODE_ID: String(spec.id),
        VOTERS: voters,
        BROKER_PORT: String(spec.brokerPort),
        CONTROLLER_LISTENER:
          spec.controllerPort === undefined ? '' : `,CONTROLLER://127.0.0.1:${spec.controllerPort}`,
        LOG_DIR: join(spec.dir, 'kafka-data'),
      }),
    );
  }
  const jvm = (spec: NodeSpec) => [
    '-cp',
    jars.classpath,
    `-Dlog4j.configuration=file:${join(CONFIG_DIR, 'log4j.properties')}`,
    `-Dkafka.logs.dir=${spec.dir}`,
    '-Djava.awt.headless=true',
  ];
  const logFile = (spec: NodeSpec) => join(spec.dir, 'kafka.log');
  const clusterId = newClusterId();
  await Promise.all(
    specs.map(async (spec) => {
      const format = await ManagedProcess.start({
        name: `kafka storage format (node ${spec.id})`,
        command: javaCommand(),
        args: [
          '-Xmx128m',
          ...jvm(spec),
          'kafka.tools.StorageTool',
          'format',
          '-t',
          clusterId,
          '-c',
          spec.propertiesFile,
        ],
        logFile: logFile(spec),
      });
      const code = await format.exited;
      if (code !== 0) {
        throw new Error(
          `kafka storage format (node ${spec.id}) exited with ${code}:\n${tail(logFile(spec))}`,
        );
      }
    }),
  );
  const heap = options.heap ?? '384m';
  const launch = (spec: NodeSpec) =>
    ManagedProcess.start({
      name: `kafka node ${spec.id}`,
      command: javaCommand(),
      args: [
        '-Xms128m',
        `-Xmx${heap}`,
        '-XX:+UseSerialGC',
        '-XX:CICompilerCount=2',
        ...jvm(spec),
        'kafka.Kafka',
        spec.propertiesFile,
      ],
      logFile: logFile(spec),
    });

  const processes = new Map<number, ManagedProcess>();
  const states = new Map<number, NodeState>();
  try {
    for (const spec of specs) {
      processes.set(spec.id, await launch(spec));
      states.set(spec.id, 'running');
    }
  } catch (error) {
    for (const managed of processes.values()) managed.killNow();
    throw error;
  }

  const bootstrap = specs.map((s) => `127.0.0.1:${s.brokerPort}`).join(',');
  const specOf = (id: number) => {
    const spec = specs.find((s) => s.id === id);
    if (!spec) throw new Error(`no node ${id} (nodes 1..${count})`);
    return spec;
  };
  const processOf = (id: number) => processes.get(id) as ManagedProcess;
  const nodes: ClusterNode[] = specs.map((spec) => ({
    id: spec.id,
    bootstrap: `127.0.0.1:${spec.brokerPort}`,
    isController: spec.controllerPort !== undefined,
    dataDir: join(spec.dir, 'kafka-data'),
    logFile: logFile(spec),
    get process() {
      return processOf(spec.id);
    },
    get state() {
      return states.get(spec.id) as NodeState;
    },
  }));
  const signal = (id: number, name: NodeJS.Signals) => {
    try {
      process.kill(processOf(id).pid, name);
    } catch {
      // already gone
    }
  };
  const kafka = () =>
    new Kafka({
      clientId: 'tally-local-cluster',
      brokers: bootstrap.split(','),
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: 3000,
      retry: { retries: 2 },
    });

  const cluster: KafkaCluster = {
    bootstrap,
    clusterId,
    nodes,
    node: (id) => nodes[specs.indexOf(specOf(id))] as ClusterNode,
    async kill(id) {
      specOf(id);
      const managed = processOf(id);
      managed.killNow();
      await managed.exited;
      states.set(id, 'killed');
    },
    pause(id) {
      if (states.get(id) !== 'running') return;
      signal(id, 'SIGSTOP');
      states.set(id, 'paused');
    },
    resume(id) {
      if (states.get(id) !== 'paused') return;
      signal(id, 'SIGCONT');
      states.set(id, 'running');
    },
    async start(id) {
      const state = states.get(id);
      if (state === 'paused') cluster.resume(id);
      if (state !== 'killed') return;
      processes.set(id, await launch(specOf(id)));
      states.set(id, 'running');
    },
    async restart(id) {
      await cluster.kill(id);
      await cluster.start(id);
    },
    async placements(topic) {
      const admin = kafka().admin();
      await admin.connect();
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
        return (topics[0]?.partitions ?? [])
          .map((p) => ({
            partition: p.partitionId,
            leader: p.leader,
            replicas: p.replicas,
            isr: p.isr,
          }))
          .sort((a, b) => a.partition - b.partition);
      } finally {
        await admin.disconnect();
      }
    },
    activeController() {
      let best: { leaderId: number; leaderEpoch: number } | undefined;
      for (const spec of specs) {
        if (spec.controllerPort === undefined || states.get(spec.id) === 'killed') continue;
        const state = readQuorumState(join(spec.dir, 'kafka-data'));
        if (state && (best === undefined || state.leaderEpoch > best.leaderEpoch)) best = state;
      }
      return best && best.leaderId >= 0 ? best.leaderId : undefined;
    },
    async waitUntilServing(timeoutMs, revive) {
      let deadline = Date.now() + timeoutMs;
      let last: unknown;
      while (Date.now() < deadline) {
        for (const spec of specs) {
          if (!processOf(spec.id).running && states.get(spec.id) === 'running') {
            if (!revive) throw new Error(`kafka node ${spec.id} exited:\n${tail(logFile(spec))}`);
            revive(spec.id);
            processes.set(spec.id, await launch(spec));
            // A node started again gets the whole wait to register (chaos seed 112: on a loaded
            // machine a node revived 100 s into the wait registered 1 s after it ended).
            deadline = Math.max(deadline, Date.now() + timeoutMs);
          }
        }
        const admin = kafka().admin();
        try {
          await admin.connect();
          const described = await admin.describeCluster();
          if (described.brokers.length < count) {
            throw new Error(`${described.brokers.length}/${count} brokers registered`);
          }
          await admin.listTopics();
          return;
        } catch (error) {
          last = error;
        } finally {
          await admin.disconnect().catch(() => {});
        }
        await sleep(300);
      }
      throw new Error(`the cluster did not serve within ${timeoutMs} ms: ${String(last)}`);
    },
    async stop() {
      for (const spec of specs) cluster.resume(spec.id);
      await Promise.all(specs.map((spec) => processOf(spec.id).stop(3000)));
      for (const spec of specs) states.set(spec.id, 'killed');
    },
  };
  return cluster;
}

/** `__cluster_metadata-0/quorum-state`: the latest leader this controller knows of, or none. */
function readQuorumState(dataDir: string): { leaderId: number; leaderEpoch: number } | undefined {
  try {
    const text = readFileSync(join(dataDir, '__cluster_metadata-0', 'quorum-state'), 'utf8');
    const state = JSON.parse(text) as { leaderId?: unknown; leaderEpoch?: unknown };
    const { leaderId, leaderEpoch } = state;
    if (typeof leaderId !== 'number' || typeof leaderEpoch !== 'number') return undefined;
    return { leaderId, leaderEpoch };
  } catch {
    return undefined;
  }
}
