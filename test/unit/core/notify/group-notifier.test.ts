import { describe, expect, it } from 'vitest';
import type { StreamCounts } from '../../../../functions/core/notify/audit-changes.js';
import {
  createAuditNotifier,
  type NotedStore,
} from '../../../../functions/core/notify/audit-notifier.js';
import type { EventSink, OutgoingEvent } from '../../../../functions/core/notify/events.js';
import {
  createGroupNotifier,
  type IncidentStore,
  type StoredIncident,
} from '../../../../functions/core/notify/group-notifier.js';
import type { Incident, NotifyRules } from '../../../../functions/core/notify/rules.js';
import type { GroupReport } from '../../../../functions/core/reconcile/ports.js';
import type { ReconcileReport } from '../../../../functions/core/reconcile/reconciler.js';

const rules: NotifyRules = {
  threshold: 'WARN',
  intervalMs: 3_600_000,
  sendOnce: false,
  sendClose: true,
  allow: undefined,
  deny: /^ignored-/,
};

/** An in-memory IncidentStore with DynamoDB's conditional semantics. */
function fakeIncidents() {
  const items = new Map<string, StoredIncident>();
  const store: IncidentStore = {
    load: async () => new Map(items),
    async save(group, incident: Incident, version) {
      if ((items.get(group)?.version ?? 0) !== version) return false;
      items.set(group, { incident, version: version + 1 });
      return true;
    },
    async remove(group, version) {
      if ((items.get(group)?.version ?? 0) !== version) return false;
      items.delete(group);
      return true;
    },
  };
  return { store, items };
}

/** A sink that records what it accepted and refuses while `down`. */
function fakeSink() {
  const sent: OutgoingEvent[] = [];
  const sink: EventSink & { down: boolean } = {
    down: false,
    async send(events) {
      if (sink.down) return events.map(() => false);
      sent.push(...events);
      return events.map(() => true);
    },
  };
  return { sink, sent };
}

const group = (name: string, status: GroupReport['status']): GroupReport => ({
  group: name,
  state: 'Stable',
  status,
  complete: 1,
  partitionCount: 1,
  maxLag: status === 'OK' ? 0 : 40,
  totalLag: status === 'OK' ? 0 : 40,
  maxTimeLagSeconds: 0,
  anomalies: {},
  partitions: [],
});

let minute = 0;
const run = (groups: GroupReport[], complete = true): ReconcileReport => ({
  runAt: new Date(Date.UTC(2026, 10, 30) + minute++ * 60_000).toISOString(),
  complete,
  unreadable: [],
  adminCalls: 0,
  groups,
  mappings: { written: 0, changed: 0, removed: 0, keptNewer: 0, details: [] },
  historyConflicts: 0,
});

const described = (events: readonly OutgoingEvent[]) =>
  events.map((e) => {
    const d = e.detail as { group: string; state: string; status: string };
    return `${d.group} ${d.state} ${d.status}`;
  });

describe('the group notifier after each reconcile run', () => {
  it('sends one open and one close event per incident, with the group, status and numbers', async () => {
    const { store, items } = fakeIncidents();
    const { sink, sent } = fakeSink();
    let n = 0;
    const notifier = createGroupNotifier(
      { incidents: store, sink, newId: () => `id-${++n}` },
      rules,
    );
    for (const status of ['OK', 'ERR', 'ERR', 'ERR', 'OK', 'OK'] as const) {
      await notifier.notify(run([group('billing', status)]), 'cluster-1');
    }
    expect(described(sent)).toEqual(['billing open ERR', 'billing closed OK']);
    expect(sent[0]).toMatchObject({
      source: 'tally.reconcile',
      detailType: 'Consumer Group Status',
      detail: { cluster: 'cluster-1', incident: { id: 'id-1' }, totalLag: 40, reason: 'opened' },
    });
    expect(items.size).toBe(0);
  });

  it('keeps the incident where it was while the bus refuses, and sends it on the next run', async () => {
    const { store, items } = fakeIncidents();
    const { sink, sent } = fakeSink();
    const notifier = createGroupNotifier({ incidents: store, sink, newId: () => 'id' }, rules);
    sink.down = true;
    expect(await notifier.notify(run([group('billing', 'WARN')]), 'c')).toEqual({
      sent: 0,
      failed: 1,
      conflicts: 0,
    });
    expect(items.size).toBe(0);
    sink.down = false;
    expect(await notifier.notify(run([group('billing', 'WARN')]), 'c')).toMatchObject({ sent: 1 });
    expect(await notifier.notify(run([group('billing', 'WARN')]), 'c')).toMatchObject({ sent: 0 });
    expect(described(sent)).toEqual(['billing open WARN']);
    // A close the bus refuses keeps the incident open, so the close is sent once it takes it.
    sink.down = true;
    await notifier.notify(run([group('billing', 'OK')]), 'c');
    expect(items.has('billing')).toBe(true);
    sink.down = false;
    await notifier.notify(run([group('billing', 'OK')]), 'c');
    expect(described(sent)).toEqual(['billing open WARN', 'billing closed OK']);
    expect(items.size).toBe(0);
  });

  it('closes a forgotten group as NOTFOUND only after a complete run, and drops its record', async () => {
    const { store, items } = fakeIncidents();
    const { sink, sent } = fakeSink();
    const notifier = createGroupNotifier({ incidents: store, sink, newId: () => 'id' }, rules);
    await notifier.notify(run([group('gone', 'ERR')]), 'c');
    await notifier.notify(run([], false), 'c'); // partial: the group may just be unreadable
    expect(items.has('gone')).toBe(true);
    await notifier.notify(run([]), 'c');
    expect(described(sent)).toEqual(['gone open ERR', 'gone closed NOTFOUND']);
    expect(items.size).toBe(0);
  });

  it('ignores denied groups and drops the record of one denied after it opened', async () => {
    const { store, items } = fakeIncidents();
    const { sink, sent } = fakeSink();
    await store.save('ignored-x', { id: 'old', start: 0, status: 'ERR', notifiedAt: 0 }, 0);
    const notifier = createGroupNotifier({ incidents: store, sink, newId: () => 'id' }, rules);
    await notifier.notify(run([group('ignored-x', 'ERR'), group('ignored-y', 'ERR')]), 'c');
    expect(sent).toEqual([]);
    expect(items.size).toBe(0);
  });

  it('counts a conflict when an overlapping run moved the incident first', async () => {
    const { store } = fakeIncidents();
    const { sink } = fakeSink();
    const late: IncidentStore = { ...store, load: async () => new Map() };
    const notifier = createGroupNotifier({ incidents: late, sink, newId: () => 'id' }, rules);
    await store.save('billing', { id: 'first', start: 0, status: 'ERR', notifiedAt: 0 }, 0);
    expect(await notifier.notify(run([group('billing', 'ERR')]), 'c')).toEqual({
      sent: 1,
      failed: 0,
      conflicts: 1,
    });
  });
});

describe('the audit notifier after each audit', () => {
  function fakeNoted() {
    let stored: { streams: Map<string, StreamCounts>; version: number } = {
      streams: new Map(),
      version: 0,
    };
    const store: NotedStore = {
      load: async () => ({ streams: new Map(stored.streams), version: stored.version }),
      async save(_topic, streams, version) {
        if (version !== stored.version) return false;
        stored = { streams: new Map(streams), version: version + 1 };
        return true;
      },
    };
    return { store, stored: () => stored };
  }
  const row = (lost: number, duplicatesInLog = 0) => ({
    start: '2026-11-30T00:00:00.000Z',
    produced: 5,
    inLog: 5 - lost,
    notInLedger: 0,
    duplicatesInLog,
    lost,
    unknownAbsent: 0,
    processed: {},
    pending: {},
    redelivered: {},
  });
  const audit = (lost: number, duplicates = 0) =>
    ({
      auditId: `audit-${lost}-${duplicates}`,
      topic: 'orders',
      complete: true,
      streams: [
        {
          stream: 'orders',
          lost: lost ? [{ from: 1, to: lost }] : [],
          buckets: [row(lost, duplicates)],
        },
      ],
    }) as unknown as Parameters<ReturnType<typeof createAuditNotifier>['notify']>[0];

  it('sends one event per stream when its lost or duplicated records grow, none while they stay', async () => {
    const { store, stored } = fakeNoted();
    const { sink, sent } = fakeSink();
    const notifier = createAuditNotifier({ noted: store, sink });
    await notifier.notify(audit(0));
    await notifier.notify(audit(2));
    await notifier.notify(audit(2));
    await notifier.notify(audit(2, 1));
    expect(sent.map((e) => e.detail)).toEqual([
      expect.objectContaining({
        topic: 'orders',
        stream: 'orders',
        lost: 2,
        lostRanges: [{ from: 1, to: 2 }],
        previously: { lost: 0, duplicates: { producer: 0, consumer: {} } },
      }),
      expect.objectContaining({ lost: 2, duplicates: { producer: 1, consumer: {} } }),
    ]);
    expect(sent[0]).toMatchObject({ source: 'tally.audit', detailType: 'Audit Finding' });
    expect(stored().streams.get('orders')).toEqual({
      lost: 2,
      producerDuplicates: 1,
      consumerDuplicates: {},
    });
  });

  it('notes nothing for a stream whose event was refused, so the next audit sends it', async () => {
    const { store } = fakeNoted();
    const { sink, sent } = fakeSink();
    const notifier = createAuditNotifier({ noted: store, sink });
    sink.down = true;
    expect(await notifier.notify(audit(3))).toMatchObject({ sent: 0, failed: 1 });
    sink.down = false;
    expect(await notifier.notify(audit(3))).toMatchObject({ sent: 1, failed: 0 });
    expect(sent).toHaveLength(1);
  });
});
