// Where seqs were found (partition, offset, session), in memory that grows with runs, not with
// records: consecutive seqs at consecutive offsets of one partition and session form one run.

export interface Placement {
  readonly partition: number;
  readonly offset: number;
  readonly session: string;
}

interface Run {
  readonly seq: number;
  readonly partition: number;
  readonly offset: number;
  readonly session: string;
  length: number;
}

export class PlacementRuns {
  readonly #runs: Run[] = [];
  /** The open run per partition, extended while seq and offset both step by one. */
  readonly #open = new Map<number, Run>();

  add(seq: number, placement: Placement): void {
    const open = this.#open.get(placement.partition);
    if (
      open &&
      open.session === placement.session &&
      seq === open.seq + open.length &&
      placement.offset === open.offset + open.length
    ) {
      open.length++;
      return;
    }
    const run: Run = { seq, ...placement, length: 1 };
    this.#runs.push(run);
    this.#open.set(placement.partition, run);
  }

  get runCount(): number {
    return this.#runs.length;
  }

  /** Every place `seq` was found, in the order found. */
  placementsOf(seq: number): Placement[] {
    return this.#runs
      .filter((run) => seq >= run.seq && seq < run.seq + run.length)
      .map((run) => ({
        partition: run.partition,
        offset: run.offset + (seq - run.seq),
        session: run.session,
      }));
  }
}
