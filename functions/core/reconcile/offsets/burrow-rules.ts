// Burrow's partition rules (linkedin/Burrow core/internal/evaluator/caching.go, current version),
// applied to a partition's commits as Burrow's ring holds them. Pure: offset-status.ts derives
// the commits from reconcile's readings and adds Tally's own checks around these.
//
// calculatePartitionStatus, in Burrow's order:
//   0. current lag ≤ allowed-lag → OK, nothing else is checked;
//   1. STOP: now − newest commit > newest − oldest commit (checkIfOffsetsStopped), unless a recent
//      log end ≤ the newest committed offset (checkIfRecentLagZero: caught up a moment ago);
//   2. REWIND: the first step down between commits, unless a later commit climbed back to the
//      offset it fell from (checkIfOffsetsRewind + checkIfRewindRecovered). Burrow checks it before
//      lag-zero: a group at zero lag that is suddenly rewound would otherwise read OK;
//   3. a commit with lag ≤ allowed-lag → OK (isLagAlwaysNotZero); commits of unknown lag skipped;
//   4. STALL: every commit has the same offset;
//   5. WARN: lag never decreases from one commit (of known lag) to the next;
//   6. OK.

/** One commit as Burrow's ring holds it. */
export interface BurrowCommit {
  readonly offset: number;
  /** Epoch ms of the commit. */
  readonly at: number;
  /** Lag when committed; null when it could not be known (Burrow's nil lag). */
  readonly lag: number | null;
}

export type BurrowStatus = 'OK' | 'WARN' | 'STOP' | 'STALL' | 'REWIND';

export function isLagAlwaysNotZero(commits: readonly BurrowCommit[], allowedLag = 0): boolean {
  return commits.every((c) => c.lag === null || c.lag > allowedLag);
}

/** Index of the first commit below the one before it; -1 when none. */
export function rewindIndex(commits: readonly BurrowCommit[]): number {
  return commits.findIndex((c, i) => i > 0 && c.offset < (commits[i - 1]?.offset ?? c.offset));
}

/** A commit at or after `index` reached the offset the rewind at `index` fell from. */
export function rewindRecovered(commits: readonly BurrowCommit[], index: number): boolean {
  const from = commits[index - 1]?.offset;
  if (from === undefined) return false;
  return commits.slice(index).some((c) => c.offset >= from);
}

export function offsetsStopped(commits: readonly BurrowCommit[], now: number): boolean {
  const first = commits[0];
  const last = commits[commits.length - 1];
  if (first === undefined || last === undefined) return false;
  return now - last.at > last.at - first.at;
}

export function offsetsStalled(commits: readonly BurrowCommit[]): boolean {
  return commits.every((c) => c.offset === commits[0]?.offset);
}

export function lagNotDecreasing(commits: readonly BurrowCommit[]): boolean {
  let last: number | null = null;
  for (const { lag } of commits) {
    if (lag === null) continue;
    if (last !== null && lag < last) return false;
    last = lag;
  }
  return true;
}

/** Some recent log end is at or below the newest commit: the group was caught up. */
export function recentLagZero(commits: readonly BurrowCommit[], logEnds: readonly number[]) {
  const last = commits[commits.length - 1];
  return last !== undefined && logEnds.some((end) => end <= last.offset);
}

export interface BurrowRuleInput {
  /** Oldest first; at least one. */
  readonly commits: readonly BurrowCommit[];
  /** Log end offsets read recently (Burrow's broker offsets). */
  readonly recentLogEnds: readonly number[];
  readonly currentLag: number;
  readonly now: number;
  /** A lag at or below it counts as zero (Burrow's `allowed-lag`, default 0). */
  readonly allowedLag: number;
}

/** Burrow's calculatePartitionStatus (header comment). */
export function burrowPartitionStatus(input: BurrowRuleInput): BurrowStatus {
  const { commits, recentLogEnds, currentLag, now, allowedLag } = input;
  if (currentLag <= allowedLag || commits.length === 0) return 'OK';
  if (offsetsStopped(commits, now) && !recentLagZero(commits, recentLogEnds)) return 'STOP';
  const rewound = rewindIndex(commits);
  if (rewound !== -1 && !rewindRecovered(commits, rewound)) return 'REWIND';
  if (!isLagAlwaysNotZero(commits, allowedLag)) return 'OK';
  if (offsetsStalled(commits)) return 'STALL';
  if (lagNotDecreasing(commits)) return 'WARN';
  return 'OK';
}
