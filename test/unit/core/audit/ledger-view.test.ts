import { describe, expect, it } from 'vitest';
import { LedgerView } from '../../../../functions/core/audit/ledger-view.js';
import { SeqRanges } from '../../../../functions/core/audit/seq-ranges.js';

// The checkpoint's bucket encoding (LedgerViewJson.buckets): time order whatever order the
// buckets were made in, and the same sets back when it is read.

describe('LedgerView buckets in the checkpoint', () => {
  it('are written in time order, as differences, and read back the same', () => {
    const view = new LedgerView();
    // Made newest first: a late block of an older bucket.
    view.producedBuckets.set(600_000, SeqRanges.from([[5, 7]]));
    view.producedBuckets.set(
      300_000,
      SeqRanges.from([
        [1, 2],
        [4, 4],
      ]),
    );
    view.since = 1;
    const json = view.toJSON();
    // Per bucket: its start less the previous one's, its range count, then per range its first
    // seq less the previous range's last, and its length less one.
    expect(json.buckets).toEqual([300_000, 2, 1, 1, 2, 0, 300_000, 1, 1, 2]);
    const read = new LedgerView(json);
    expect([...read.producedBuckets].map(([at, seqs]) => [at, seqs.toJSON()])).toEqual([
      [
        300_000,
        [
          [1, 2],
          [4, 4],
        ],
      ],
      [600_000, [[5, 7]]],
    ]);
    expect(read.toJSON()).toEqual(json);
  });

  it('lose a rewritten block’s seqs, and only those; a bucket left empty goes', () => {
    const view = new LedgerView();
    const untouched = SeqRanges.from([[1, 3]]);
    view.producedBuckets.set(0, untouched);
    view.producedBuckets.set(300_000, SeqRanges.from([[4, 6]]));
    view.producedBuckets.set(600_000, SeqRanges.from([[7, 8]]));
    view.produced = SeqRanges.from([[1, 8]]);
    view.removeSeqs(6, 8);
    expect(view.producedBuckets.get(0)).toBe(untouched);
    expect(view.producedBuckets.get(300_000)?.toJSON()).toEqual([[4, 5]]);
    expect(view.producedBuckets.has(600_000)).toBe(false);
    expect(view.produced.toJSON()).toEqual([[1, 5]]);
  });
});
