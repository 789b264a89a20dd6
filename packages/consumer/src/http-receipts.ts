import { tallyHeaders } from '../../../functions/consumer/tally-headers.js';
import { toRuns } from '../../../functions/core/receipts/msk-receipts.js';

// Receipts from a consumer that is not an MSK-triggered Lambda (a kafkajs `eachBatch`, a
// container): the seqs it processed, per stream, posted to Tally's receipts route
// (POST /v3/clusters/{cluster_id}/receipts), which stores them where the audit reads them.

/** What the receipts route takes: the seqs a group processed in one stream, as runs. */
export interface ReceiptBody {
  readonly group: string;
  readonly stream: string;
  readonly seqs: ReadonlyArray<readonly [from: number, to: number]>;
}

type Record = Parameters<typeof tallyHeaders>[0];

/**
 * One body per stream for the records a group processed, in the order given (a seq processed
 * twice stays twice: a consumer-side duplicate the audit can see). Records without `tally.*`
 * headers are left out.
 */
export function receiptBodies(group: string, records: readonly Record[]): ReceiptBody[] {
  const byStream = new Map<string, number[]>();
  for (const record of records) {
    const { stream, seq } = tallyHeaders(record);
    if (stream === undefined || seq === undefined) continue;
    const seqs = byStream.get(stream) ?? [];
    seqs.push(seq);
    byStream.set(stream, seqs);
  }
  return [...byStream].map(([stream, seqs]) => ({ group, stream, seqs: toRuns(seqs) }));
}

export interface HttpReceiptsOptions {
  /** Tally's API, e.g. `https://abc.execute-api.eu-west-1.amazonaws.com`. */
  readonly baseUrl: string;
  readonly clusterId: string;
  /** A bearer token with the `tally/receipts` scope (or a function giving a fresh one). */
  readonly token?: string | (() => string | Promise<string>);
  readonly fetch?: typeof fetch;
}

/** Posts receipt bodies; a refusal or a failed request rejects (so the batch is not committed). */
export function postReceipts(options: HttpReceiptsOptions) {
  const doFetch = options.fetch ?? fetch;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/v3/clusters/${encodeURIComponent(options.clusterId)}/receipts`;
  return async (bodies: readonly ReceiptBody[]): Promise<void> => {
    for (const body of bodies) {
      const token = typeof options.token === 'function' ? await options.token() : options.token;
      const response = await doFetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token !== undefined && { authorization: `Bearer ${token}` }),
        },
        body: JSON.stringify(body),
      });
      if (response.status !== 202) {
        throw new Error(
          `receipts: ${url} answered ${response.status}: ${(await response.text()).slice(0, 500)}`,
        );
      }
      await response.arrayBuffer().catch(() => undefined);
    }
  };
}
