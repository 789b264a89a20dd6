import { describe, expect, it } from 'vitest';
import {
  auditChanges,
  type StreamCounts,
} from '../../../../functions/core/notify/audit-changes.js';
import {
  decide,
  type GroupStatus,
  type Incident,
  type NotifyRules,
  watched,
} from '../../../../functions/core/notify/rules.js';
import { loadNotifyConfig } from '../../../../functions/platform/notify-config.js';

const MINUTE = 60_000;
const rules: NotifyRules = {
  threshold: 'WARN',
  intervalMs: 60 * MINUTE,
  sendOnce: false,
  sendClose: true,
  allow: undefined,
  deny: undefined,
};
const ids = () => {
  let n = 0;
  return () => `incident-${++n}`;
};

/** Feeds statuses a minute apart, keeping `next` as the caller does once events are accepted. */
function replay(statuses: ReadonlyArray<GroupStatus | undefined>, with_: NotifyRules = rules) {
  const newId = ids();
  let incident: Incident | undefined;
  return statuses.map((status, i) => {
    const decision = decide(incident, status, i * MINUTE, with_, newId);
    incident = decision.next;
    return decision.event
      ? `${decision.event.state}:${decision.event.reason}:${decision.event.status}`
      : '-';
  });
}

describe("Burrow's notifier rules", () => {
  it('opens once when a group reaches the threshold and closes once when it clears', () => {
    expect(replay(['OK', 'ERR', 'ERR', 'ERR', 'OK', 'OK'])).toEqual([
      '-',
      'open:opened:ERR',
      '-',
      '-',
      'closed:cleared:OK',
      '-',
    ]);
  });

  it('notifies again at once when the status changes, otherwise only after the interval', () => {
    const every = Array.from({ length: 62 }, () => 'ERR' as const);
    const events = replay(['WARN', 'ERR', ...every]);
    expect(events.slice(0, 2)).toEqual(['open:opened:WARN', 'open:status-changed:ERR']);
    // The ERR event went out at minute 1: the repeat is due at minute 61, and only then.
    expect(events.map((e, i) => [i, e]).filter(([, e]) => e !== '-')).toEqual([
      [0, 'open:opened:WARN'],
      [1, 'open:status-changed:ERR'],
      [61, 'open:repeat:ERR'],
    ]);
  });

  it('with send-once never repeats an unchanged status', () => {
    const events = replay(
      Array.from({ length: 200 }, () => 'WARN' as const),
      { ...rules, sendOnce: true },
    );
    expect(events.filter((e) => e !== '-')).toEqual(['open:opened:WARN']);
  });

  it('with threshold ERR ignores WARN, and closes when ERR falls back to WARN', () => {
    expect(replay(['WARN', 'ERR', 'WARN', 'OK'], { ...rules, threshold: 'ERR' })).toEqual([
      '-',
      'open:opened:ERR',
      'closed:cleared:WARN',
      '-',
    ]);
  });

  it('without send-close forgets the incident silently, and a new one gets a new id', () => {
    const newId = ids();
    const noClose = { ...rules, sendClose: false };
    const first = decide(undefined, 'ERR', 0, noClose, newId);
    const cleared = decide(first.next, 'OK', MINUTE, noClose, newId);
    expect(cleared).toEqual({ event: undefined, next: undefined });
    const again = decide(cleared.next, 'ERR', 2 * MINUTE, noClose, newId);
    expect(again.event?.incident.id).toBe('incident-2');
    expect(again.event?.incident.start).toBe(2 * MINUTE);
  });

  it('closes an open incident as NOTFOUND when its group is forgotten, and nothing else', () => {
    expect(replay(['ERR', undefined])).toEqual(['open:opened:ERR', 'closed:gone:NOTFOUND']);
    expect(replay([undefined, 'OK', undefined])).toEqual(['-', '-', '-']);
  });

  it('keeps one incident id and start from open to close', () => {
    const newId = ids();
    const open = decide(undefined, 'WARN', 0, rules, newId);
    const changed = decide(open.next, 'ERR', MINUTE, rules, newId);
    const closed = decide(changed.next, 'OK', 2 * MINUTE, rules, newId);
    expect([open, changed, closed].map((d) => d.event?.incident.id)).toEqual([
      'incident-1',
      'incident-1',
      'incident-1',
    ]);
    expect(closed.event).toMatchObject({ previousStatus: 'ERR', status: 'OK' });
  });

  it('lets a group through the allow and deny lists as Burrow does (unanchored regexes)', () => {
    const lists = { allow: /^billing-/, deny: /-test$/ };
    expect(watched('billing-eu', lists)).toBe(true);
    expect(watched('billing-eu-test', lists)).toBe(false);
    expect(watched('orders', lists)).toBe(false);
    expect(watched('anything', { allow: undefined, deny: /tmp/ })).toBe(true);
    expect(watched('my-tmp-group', { allow: undefined, deny: /tmp/ })).toBe(false);
  });
});

describe('notifier configuration', () => {
  it("defaults to Burrow's threshold (WARN) and send-close, an hour's interval, off without a bus", () => {
    const config = loadNotifyConfig({});
    expect(config.eventBus).toBeUndefined();
    expect(config.rules).toMatchObject({
      threshold: 'WARN',
      intervalMs: 3_600_000,
      sendOnce: false,
      sendClose: true,
    });
  });

  it('names the variable at fault', () => {
    expect(() => loadNotifyConfig({ TALLY_NOTIFY_THRESHOLD: 'STOP' })).toThrow(
      /TALLY_NOTIFY_THRESHOLD/,
    );
    expect(() => loadNotifyConfig({ TALLY_NOTIFY_GROUP_ALLOWLIST: '(' })).toThrow(
      /TALLY_NOTIFY_GROUP_ALLOWLIST/,
    );
    expect(() => loadNotifyConfig({ TALLY_NOTIFY_INTERVAL_SECONDS: '-1' })).toThrow(
      /TALLY_NOTIFY_INTERVAL_SECONDS/,
    );
    expect(() => loadNotifyConfig({ TALLY_NOTIFY_SEND_CLOSE: 'yes' })).toThrow(
      /TALLY_NOTIFY_SEND_CLOSE/,
    );
  });
});

describe('audit findings worth an event', () => {
  const counts = (
    lost: number,
    producer = 0,
    consumer: Record<string, number> = {},
  ): StreamCounts => ({
    lost,
    producerDuplicates: producer,
    consumerDuplicates: consumer,
  });

  it('notifies a stream once per growth of its lost or duplicated records', () => {
    const first = auditChanges(
      new Map(),
      new Map([
        ['orders', counts(2)],
        ['refunds', counts(0)],
      ]),
    );
    expect(first.notify).toEqual(['orders']);
    // Nothing new: no event, however many audits still hold the same totals.
    const same = auditChanges(first.next, new Map([['orders', counts(2)]]));
    expect(same.notify).toEqual([]);
    const more = auditChanges(same.next, new Map([['orders', counts(2, 0, { billing: 3 })]]));
    expect(more.notify).toEqual(['orders']);
  });

  it('notes only streams with findings, so a loss folded away and found again is notified again', () => {
    const found = auditChanges(new Map(), new Map([['orders', counts(1)]]));
    const folded = auditChanges(found.next, new Map([['orders', counts(0)]]));
    expect(folded.notify).toEqual([]);
    expect(folded.next.size).toBe(0);
    expect(auditChanges(folded.next, new Map([['orders', counts(1)]])).notify).toEqual(['orders']);
  });
});
