import { ALL_GROUPS, type GroupScope } from '../reconcile/group-shards.js';
import type { ReconcileReport } from '../reconcile/reconciler.js';
import { type EventSink, groupEvent } from './events.js';
import { type Decision, decide, type Incident, type NotifyRules, watched } from './rules.js';

// After each reconcile run: Burrow's notifier over the run's group statuses. The open incidents
// are stored one small record per group (`IncidentStore`), written only after the group's event
// was accepted, each write conditional on the version read: a refused event is retried by the
// next run, and of two overlapping runs only one moves an incident on (the other counts a
// conflict; both may have sent the event, so delivery is at least once, not exactly once).

export interface StoredIncident {
  readonly incident: Incident;
  /** The version read; a write or delete happens only over it. */
  readonly version: number;
}

export interface IncidentStore {
  load(): Promise<ReadonlyMap<string, StoredIncident>>;
  /** Writes over `version` (0: not stored yet); false when another run wrote first. */
  save(group: string, incident: Incident, version: number): Promise<boolean>;
  remove(group: string, version: number): Promise<boolean>;
}

export interface NotifyOutcome {
  /** Events accepted. */
  readonly sent: number;
  /** Events refused or not delivered: the next run decides and sends them again. */
  readonly failed: number;
  /** Incidents another run moved on first. */
  readonly conflicts: number;
}

export interface GroupNotifierPorts {
  readonly incidents: IncidentStore;
  readonly sink: EventSink;
  readonly newId: () => string;
}

export function createGroupNotifier(ports: GroupNotifierPorts, rules: NotifyRules) {
  /**
   * `scope`: the groups the report is about (one shard of the fan-out); other groups' incidents
   * are left to the run that reports them, not closed as forgotten.
   */
  async function notify(
    report: ReconcileReport,
    cluster: string,
    scope: GroupScope = ALL_GROUPS,
  ): Promise<NotifyOutcome> {
    const at = Date.parse(report.runAt);
    const stored = await ports.incidents.load();
    const reports = new Map(report.groups.map((g) => [g.group, g]));
    const decisions = new Map<string, Decision>();
    for (const group of report.groups) {
      if (!watched(group.group, rules)) continue;
      decisions.set(
        group.group,
        decide(stored.get(group.group)?.incident, group.status, at, rules, ports.newId),
      );
    }
    for (const [group, { incident }] of stored) {
      if (decisions.has(group) || !scope.owns(group)) continue;
      if (!watched(group, rules)) {
        decisions.set(group, { event: undefined, next: undefined }); // no longer ours to watch
      } else if (report.complete && !reports.has(group)) {
        // Forgotten by reconcile (its history let go): the incident closes, its record goes.
        decisions.set(group, decide(incident, undefined, at, rules, ports.newId));
      }
    }
    const sending = [...decisions].filter(([, d]) => d.event !== undefined);
    const accepted = await ports.sink.send(
      sending.map(([group, d]) =>
        groupEvent(cluster, group, d.event as NonNullable<Decision['event']>, reports.get(group)),
      ),
    );
    const refused = new Set(sending.filter((_, i) => !accepted[i]).map(([group]) => group));
    let conflicts = 0;
    for (const [group, decision] of decisions) {
      if (refused.has(group)) continue;
      const before = stored.get(group);
      if (decision.next === before?.incident) continue;
      const version = before?.version ?? 0;
      const written = decision.next
        ? await ports.incidents.save(group, decision.next, version)
        : await ports.incidents.remove(group, version);
      if (!written) conflicts++;
    }
    return { sent: sending.length - refused.size, failed: refused.size, conflicts };
  }
  return { notify };
}
