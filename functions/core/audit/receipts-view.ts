import { SeqCounter } from './seq-ranges.js';

// What the audit has folded of one stream's receipts, per group, carried in its checkpoint so
// that a run reads only the receipts written since the last one (the receipts table's sort key
// is the time a receipt was written). Counters, not receipts: they grow with gaps and
// redeliveries above the stream's floor, like the rest of the checkpoint — never with the
// receipt count. A receipt written at or before `upTo` is in the counters; later ones are read
// again by the next run (they may still be landing: the lag), and counted in this run only.

type CounterJson = ReturnType<SeqCounter['toJSON']>;

export interface ReceiptsViewJson {
  readonly groups: Array<
    [
      group: string,
      upTo: number,
      delivered: CounterJson,
      acted: CounterJson,
      suppressed: CounterJson,
    ]
  >;
}

/** A group's receipts as counters: every delivery, those it acted on, those it suppressed. */
export interface GroupCounters {
  readonly delivered: SeqCounter;
  readonly acted: SeqCounter;
  readonly suppressed: SeqCounter;
}

export const emptyCounters = (): GroupCounters => ({
  delivered: new SeqCounter(),
  acted: new SeqCounter(),
  suppressed: new SeqCounter(),
});

const clone = (counter: SeqCounter) => SeqCounter.fromJSON(counter.toJSON());

export const cloneCounters = (c: GroupCounters): GroupCounters => ({
  delivered: clone(c.delivered),
  acted: clone(c.acted),
  suppressed: clone(c.suppressed),
});

/** Per group: the receipts written up to `upTo` (ms), folded. Mutable. */
export class ReceiptsView {
  readonly #groups = new Map<string, { upTo: number; counters: GroupCounters }>();

  constructor(json?: ReceiptsViewJson) {
    for (const [group, upTo, delivered, acted, suppressed] of json?.groups ?? []) {
      this.#groups.set(group, {
        upTo,
        counters: {
          delivered: SeqCounter.fromJSON(delivered),
          acted: SeqCounter.fromJSON(acted),
          suppressed: SeqCounter.fromJSON(suppressed),
        },
      });
    }
  }

  get isEmpty(): boolean {
    return this.#groups.size === 0;
  }

  /** The group's folded counters and up to when, if this view holds it. */
  get(group: string): { readonly upTo: number; readonly counters: GroupCounters } | undefined {
    return this.#groups.get(group);
  }

  /** Holds `counters` for `group` as folded up to `upTo`. */
  set(group: string, upTo: number, counters: GroupCounters): void {
    this.#groups.set(group, { upTo, counters });
  }

  /** Forgets groups not audited any more (a group asked for again is read from the start). */
  keepOnly(groups: readonly string[]): void {
    for (const group of this.#groups.keys())
      if (!groups.includes(group)) this.#groups.delete(group);
  }

  /** Forgets every seq up to `floor` (folded into the stream's totals). */
  dropThrough(floor: number): void {
    for (const { counters } of this.#groups.values()) {
      counters.delivered.dropThrough(floor);
      counters.acted.dropThrough(floor);
      counters.suppressed.dropThrough(floor);
    }
  }

  toJSON(): ReceiptsViewJson {
    return {
      groups: [...this.#groups].map(([group, { upTo, counters: c }]) => [
        group,
        upTo,
        c.delivered.toJSON(),
        c.acted.toJSON(),
        c.suppressed.toJSON(),
      ]),
    };
  }
}
