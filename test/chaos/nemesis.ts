import { appendFileSync } from 'node:fs';
import type { Admin } from 'kafkajs';
import type { KafkaCluster } from '../../infra/local/kafka-cluster.js';
import type { PlannedFault } from './schedule.js';

// Runs the planned faults against the cluster until the deadline, one at a time, and logs each
// (what, which node, when it was injected and healed, and what the cluster said then) as a JSON
// line: the checker counts them, a reader replays them against the answers' times.

export interface NemesisHooks {
  readonly cluster: KafkaCluster;
  readonly admin: Admin;
  readonly topic: string;
  /** Starts an audit (and waits for nothing): the restart lands while it runs. */
  readonly startAudit: (label: string) => Promise<unknown>;
  /** SIGKILLs one consumer-group member and starts another; returns the killed pid. */
  readonly killMember: (choice: number) => Promise<number | undefined>;
  readonly faultsFile: string;
  readonly log: (line: string) => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface FaultRecord {
  readonly n: number;
  readonly kind: string;
  readonly phase: 'inject' | 'heal';
  readonly at: string;
  readonly nodes?: readonly number[];
  readonly detail?: unknown;
}

export async function runNemesis(
  plan: readonly PlannedFault[],
  until: number,
  hooks: NemesisHooks,
) {
  const { cluster } = hooks;
  const ids = cluster.nodes.map((n) => n.id);
  const record = (entry: FaultRecord) => {
    appendFileSync(hooks.faultsFile, `${JSON.stringify(entry)}\n`);
    hooks.log(
      `${entry.at} fault ${entry.n} ${entry.phase} ${entry.kind}${entry.nodes ? ` nodes ${entry.nodes.join(',')}` : ''}${entry.detail ? ` ${JSON.stringify(entry.detail)}` : ''}`,
    );
  };
  const at = () => new Date().toISOString();
  let injected = 0;
  for (const [n, fault] of plan.entries()) {
    if (Date.now() + fault.downMs > until) break;
    const nth = (list: readonly number[]) => list[Math.floor(fault.choice * list.length)] as number;
    let nodes: number[] = [];
    let detail: unknown;
    switch (fault.kind) {
      case 'kill-leader': {
        const offsets = await hooks.admin.fetchTopicOffsets(hooks.topic).catch(() => []);
        const busiest = [...offsets].sort((a, b) => Number(b.high) - Number(a.high))[0];
        const placements = await cluster.placements(hooks.topic).catch(() => []);
        const partition = busiest?.partition ?? 0;
        const leader = placements.find((p) => p.partition === partition)?.leader ?? -1;
        nodes = [leader >= 0 ? leader : nth(ids)];
        detail = { partition, leader };
        break;
      }
      case 'kill-controller': {
        const controller = cluster.activeController();
        nodes = [controller ?? nth(ids)];
        detail = { controller };
        break;
      }
      case 'pause-broker':
      case 'restart-during-tasks':
        nodes = [nth(ids)];
        break;
      case 'two-down': {
        const first = nth(ids);
        const rest = ids.filter((id) => id !== first);
        nodes = [first, rest[Math.floor(((fault.choice * 7) % 1) * rest.length)] as number];
        break;
      }
      case 'kill-member':
        break;
    }
    injected++;
    if (fault.kind === 'kill-member') {
      const pid = await hooks.killMember(fault.choice);
      record({ n, kind: fault.kind, phase: 'inject', at: at(), detail: { pid } });
      await sleep(fault.downMs);
      record({ n, kind: fault.kind, phase: 'heal', at: at() });
      await sleep(fault.quietMs);
      continue;
    }
    if (fault.kind === 'restart-during-tasks') {
      void hooks.startAudit(`during fault ${n}`);
      await sleep(300);
    }
    record({ n, kind: fault.kind, phase: 'inject', at: at(), nodes, detail });
    if (fault.kind === 'pause-broker') for (const id of nodes) cluster.pause(id);
    else await Promise.all(nodes.map((id) => cluster.kill(id)));
    await sleep(fault.downMs);
    for (const id of nodes) await cluster.start(id);
    record({
      n,
      kind: fault.kind,
      phase: 'heal',
      at: at(),
      nodes,
      detail: { controller: cluster.activeController() },
    });
    await cluster.waitUntilServing(180_000, (id) =>
      record({ n, kind: 'node-exited-by-itself', phase: 'heal', at: at(), nodes: [id] }),
    );
    await sleep(fault.quietMs);
  }
  return injected;
}
