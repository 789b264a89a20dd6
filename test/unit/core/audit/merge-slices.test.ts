import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAuditor } from '../../../../functions/core/audit/auditor.js';
import { partitionGroups } from '../../../../functions/core/audit/merge-slices.js';
import type {
  AuditPorts,
  AuditReport,
  SliceJson,
  SlicePorts,
} from '../../../../functions/core/audit/ports.js';
import { scanSlice } from '../../../../functions/core/audit/scan-slice.js';
import {
  AuditWorld,
  applyInStep,
  comparable,
  MINUTE,
  type Op,
  opArbs,
  TOPIC,
} from '../../../helpers/audit-world.js';
import { PROPERTY_SEED } from '../../../helpers/property-seed.js';

// A fan-out audit (children reading groups of partitions into slices, one merge) must report what
// one sequential audit of the whole topic reports, run after run: two worlds get the same
// publishes (a stream's records spread over every partition), cross-partition duplicates,
// UNKNOWN outcomes, losses and receipts; one is audited sequentially, the other by fan-out.

const PARTITIONS = 6;

/** A world of six partitions whose audit can also fan out: children save slices, one merges. */
class World extends AuditWorld {
  readonly slices = new Map<string, { state: SliceJson; version: number }>();

  constructor() {
    super({ partitions: PARTITIONS });
  }

  override ports(): AuditPorts & { slices: SlicePorts } {
    return {
      ...super.ports(),
      slices: {
        load: async (_topic, slice) => {
          const saved = this.slices.get(slice);
          return saved && structuredClone(saved);
        },
        save: async (_topic, slice, state, version) => {
          expect(this.slices.get(slice)?.version ?? 0).toBe(version);
          this.slices.set(slice, {
            state: JSON.parse(JSON.stringify(state)),
            version: version + 1,
          });
        },
      },
    };
  }

  /** The children (of at most `perChild` partitions each), then the merge. */
  async fanOut(perChild: number, options: { merge?: boolean } = {}): Promise<AuditReport> {
    const groups = partitionGroups(PARTITIONS, perChild);
    const ports = this.ports();
    await Promise.all(
      groups.map((group) =>
        scanSlice(ports, {
          topic: TOPIC,
          ...group,
          scanDeadlineAt: this.now + MINUTE,
          bucketMs: 5 * MINUTE,
        }),
      ),
    );
    if (options.merge === false) return undefined as never;
    const slices = groups.map((g) => g.slice);
    return comparable(await createAuditor(ports).run(this.request(slices)));
  }
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: opArbs.publish(8) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('duplicate' as const),
      stream: fc.nat(1),
      pick: fc.nat(50),
      partition: fc.nat(PARTITIONS - 1),
    }),
  },
  opArbs.receive,
  fc.record({ kind: fc.constant('untracked' as const), partition: fc.nat(PARTITIONS - 1) }),
  opArbs.wait,
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('audit' as const) }) },
);

describe('fan-out audit (core)', () => {
  it('groups partitions 0..n-1 in contiguous slices of at most n per child', () => {
    expect(partitionGroups(5, 2)).toEqual([
      { slice: '0-1', first: 0, last: 1 },
      { slice: '2-3', first: 2, last: 3 },
      { slice: '4-4', first: 4, last: 4 },
    ]);
    expect(partitionGroups(32, 32)).toEqual([{ slice: '0-31', first: 0, last: 31 }]);
    expect(() => partitionGroups(4, 0)).toThrow(RangeError);
  });

  it('reports what one sequential audit reports, run after run, for any grouping', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: PARTITIONS }),
        async (ops, perChild) => {
          const sequential = new World();
          const fanned = new World();
          const settled: Op[] = [...ops, { kind: 'wait', minutes: 30 }, { kind: 'audit' }];
          await applyInStep([sequential, fanned], settled, async () => {
            expect(await fanned.fanOut(perChild)).toEqual(await sequential.audit());
          });
          expect(fanned.blocks).toEqual(sequential.blocks);
        },
      ),
      { numRuns: 60, seed: PROPERTY_SEED },
    );
  }, 30_000);

  it('names both copies of a duplicate that two children read, with their partitions and sessions', async () => {
    const world = new World();
    world.apply({ kind: 'publish', stream: 0, fates: ['ACKED', 'ACKED'] });
    world.apply({ kind: 'duplicate', stream: 0, pick: 0, partition: 4 });
    const report = await world.fanOut(2);
    expect(report.streams[0]?.producerDuplicates).toEqual([
      {
        seq: 1,
        times: 2,
        copies: [
          { partition: 0, offset: 0, session: 'p1' },
          { partition: 4, offset: 0, session: 'p2' },
        ],
      },
    ]);
  });

  it('a child out of time saves its slice; the next fan-out continues it, counting nothing twice', async () => {
    const sequential = new World();
    const fanned = new World();
    const ops: Op[] = [
      { kind: 'publish', stream: 0, fates: ['ACKED', 'UNKNOWN_LANDED', 'ACKED', 'UNKNOWN_ABSENT'] },
      { kind: 'publish', stream: 0, fates: ['ACKED', 'ACKED', 'ACKED', 'ACKED', 'ACKED', 'ACKED'] },
      { kind: 'duplicate', stream: 0, pick: 1, partition: 3 },
      { kind: 'wait', minutes: 20 },
    ];
    for (const op of ops) {
      sequential.apply(op);
      fanned.apply(op);
    }
    fanned.budgets.set('0-1', 1);
    const cut = await fanned.fanOut(2);
    expect(cut.complete).toBe(false);
    expect(fanned.slices.get('0-1')?.state.complete).toBe(false);
    const whole = await sequential.audit();
    // The first merge took what the other children and the cut one's first record read.
    expect(cut.scanned).toBe(7);
    expect(await fanned.fanOut(2)).toEqual({ ...whole, scanned: whole.scanned - cut.scanned });
    expect(fanned.checkpoint?.state.scanned).toBe(sequential.checkpoint?.state.scanned);
  });

  it('children that run again before a merge continue their slices; a merge then counts each record once', async () => {
    const sequential = new World();
    const fanned = new World();
    const op: Op = {
      kind: 'publish',
      stream: 1,
      fates: ['ACKED', 'ACKED', 'ACKED', 'UNKNOWN_LANDED'],
    };
    sequential.apply(op);
    fanned.apply(op);
    await fanned.fanOut(3, { merge: false });
    for (const w of [sequential, fanned])
      w.apply({ kind: 'duplicate', stream: 1, pick: 0, partition: 5 });
    expect(await fanned.fanOut(3)).toEqual({ ...(await sequential.audit()), scanned: 5 });
  });

  it('a slice read on top of an older checkpoint is not absorbed: its partitions are read again', async () => {
    const world = new World();
    world.apply({ kind: 'publish', stream: 0, fates: ['ACKED', 'ACKED', 'ACKED'] });
    await world.fanOut(2, { merge: false });
    // A sequential audit saves the checkpoint in between: the slices are stale.
    expect((await world.audit()).scanned).toBe(3);
    world.apply({ kind: 'publish', stream: 0, fates: ['ACKED'] });
    const ports = world.ports();
    const report = await createAuditor(ports).run(world.request(['0-1', '2-3', '4-5']));
    expect(report.complete).toBe(false);
    expect(report.scanned).toBe(0);
    const next = await world.fanOut(2);
    expect(next.scanned).toBe(1);
    expect(next.streams[0]).toMatchObject({ produced: 4, inLog: 4, producerDuplicates: [] });
  });
});
