// @kafka-tally/client: publish to Tally and look records up, with docs/api.md's retry rules.
export {
  createTallyClient,
  type LookupResult,
  type ProduceRecord,
  type PublishOptions,
  type PublishResult,
  type RecordData,
  type TallyClient,
  type TallyClientOptions,
  TallyRequestError,
} from './client.js';
export type { Acked, LookedUp, NotAcked, RecordOutcome, Rejected } from './outcomes.js';
export type { RetryPolicy } from './retry.js';
