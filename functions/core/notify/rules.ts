// Burrow's notifier semantics (core/internal/notifier/coordinator.go), decided per group and run:
// an incident opens when a group's status reaches the threshold, is notified again at most once
// per interval (never with send-once) unless its status changes, and closes when the status falls
// below the threshold (send-close). Pure: the caller sends the event and stores `next` only once
// the event was accepted, so a refused event is decided again, and sent again, by the next run.

export type GroupStatus = 'OK' | 'WARN' | 'ERR';

/** Burrow's status numbers: a status at or above the threshold's is bad. */
export const STATUS_RANK: Readonly<Record<GroupStatus, number>> = { OK: 1, WARN: 2, ERR: 3 };

export interface NotifyRules {
  /** Burrow's `threshold` (default WARN). */
  readonly threshold: 'WARN' | 'ERR';
  /** Burrow's `send-interval`: an open incident whose status did not change is repeated after it. */
  readonly intervalMs: number;
  /** Burrow 1.0's `send-once`: an incident is notified once per status, never repeated. */
  readonly sendOnce: boolean;
  /** Burrow's `send-close`. */
  readonly sendClose: boolean;
  /** Burrow's `group-allowlist` and `group-denylist` (unanchored, as Go's MatchString). */
  readonly allow: RegExp | undefined;
  readonly deny: RegExp | undefined;
}

/** A group's open incident, as last notified: one small record per group with one open. */
export interface Incident {
  readonly id: string;
  /** When it opened (epoch ms). */
  readonly start: number;
  /** The status its last event carried. */
  readonly status: GroupStatus;
  /** When its last event was accepted. */
  readonly notifiedAt: number;
}

export type NotifyReason = 'opened' | 'status-changed' | 'repeat' | 'cleared' | 'gone';

export interface NotifyEvent {
  readonly state: 'open' | 'closed';
  readonly reason: NotifyReason;
  readonly incident: Incident;
  /** NOTFOUND (Burrow's status for a group it does not know) when the group is gone. */
  readonly status: GroupStatus | 'NOTFOUND';
  readonly previousStatus: GroupStatus | undefined;
}

export interface Decision {
  /** What to send, if anything. */
  readonly event: NotifyEvent | undefined;
  /** The incident to keep once `event` (if any) was accepted; undefined: none open. */
  readonly next: Incident | undefined;
}

/** Whether the allow and deny lists let a group's notifications through. */
export function watched(group: string, rules: Pick<NotifyRules, 'allow' | 'deny'>): boolean {
  if (rules.allow && !rules.allow.test(group)) return false;
  return !rules.deny?.test(group);
}

/**
 * What a group's status at `at` means for its incident. `status` undefined: the group is gone
 * (forgotten by reconcile), which closes an open incident as NOTFOUND.
 */
export function decide(
  previous: Incident | undefined,
  status: GroupStatus | undefined,
  at: number,
  rules: NotifyRules,
  newId: () => string,
): Decision {
  const close = (reason: 'cleared' | 'gone', incident: Incident): Decision => ({
    event: rules.sendClose
      ? {
          state: 'closed',
          reason,
          incident,
          status: status ?? 'NOTFOUND',
          previousStatus: incident.status,
        }
      : undefined,
    next: undefined,
  });
  if (status === undefined) return previous ? close('gone', previous) : NOTHING;
  if (STATUS_RANK[status] < STATUS_RANK[rules.threshold]) {
    return previous ? close('cleared', previous) : NOTHING;
  }
  const open = (reason: 'opened' | 'status-changed' | 'repeat', incident: Incident): Decision => ({
    event: { state: 'open', reason, incident, status, previousStatus: previous?.status },
    next: incident,
  });
  if (!previous) return open('opened', { id: newId(), start: at, status, notifiedAt: at });
  if (previous.status !== status) {
    return open('status-changed', { ...previous, status, notifiedAt: at });
  }
  if (!rules.sendOnce && at - previous.notifiedAt >= rules.intervalMs) {
    return open('repeat', { ...previous, notifiedAt: at });
  }
  return { event: undefined, next: previous };
}

const NOTHING: Decision = { event: undefined, next: undefined };
