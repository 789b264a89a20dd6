import { between, pick, seededRandom } from './random.js';

// The nemesis's plan, drawn from a seed: which fault comes next, how long it lasts, which node
// it picks where the choice is free, and the quiet time after it. Faults run one after another,
// each healed before the next, so a run's cluster always comes back; the order starts with one
// of each class (shuffled) so even a short run meets several.

export const FAULT_KINDS = [
  /** The leader of the busiest partition, SIGKILLed mid-batch, started again after `downMs`. */
  'kill-leader',
  /** A broker SIGSTOPped past the producer's request timeout, then SIGCONT. */
  'pause-broker',
  /** Two brokers SIGKILLed at once: fewer than min.insync.replicas, so writes must fail. */
  'two-down',
  /** The active KRaft controller SIGKILLed. */
  'kill-controller',
  /** A broker SIGKILLed and started at once while an audit (and reconcile) run. */
  'restart-during-tasks',
  /** A member of the consumer group SIGKILLed and replaced: the group rebalances. */
  'kill-member',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

export interface PlannedFault {
  readonly kind: FaultKind;
  /** How long the fault lasts before it is healed (ms). */
  readonly downMs: number;
  /** Quiet time after it is healed (ms). */
  readonly quietMs: number;
  /** A draw in [0, 1) for the node choices the fault makes among its candidates. */
  readonly choice: number;
}

const DOWN_MS: Record<FaultKind, readonly [number, number]> = {
  'kill-leader': [4000, 10_000],
  'pause-broker': [8000, 14_000],
  'two-down': [5000, 10_000],
  'kill-controller': [4000, 10_000],
  'restart-during-tasks': [0, 2000],
  'kill-member': [1000, 4000],
};

export function planFaults(seed: number, count = 200): PlannedFault[] {
  const random = seededRandom(seed);
  const first = [...FAULT_KINDS];
  for (let i = first.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [first[i], first[j]] = [first[j] as FaultKind, first[i] as FaultKind];
  }
  return Array.from({ length: count }, (_, i) => {
    const kind = first[i] ?? pick(random, FAULT_KINDS);
    const [low, high] = DOWN_MS[kind];
    return {
      kind,
      downMs: between(random, low, high),
      quietMs: between(random, 2000, 6000),
      choice: random(),
    };
  });
}
