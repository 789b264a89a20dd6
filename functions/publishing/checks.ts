import type { Deadline } from '../core/shared/deadline.js';
import { InvalidInputError } from '../core/shared/errors.js';
import { requireCluster } from '../platform/http-event.js';

// Checks every publish route shares, apart from the publish runtime: the read routes (clusters,
// lookup) use them without loading what publishing needs.

const STREAM = /^[A-Za-z0-9._:-]{1,249}$/;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** A stream name, or InvalidInputError naming `field`. */
export function checkStream(stream: string, field: string): string {
  if (!STREAM.test(stream)) {
    throw new InvalidInputError(`${field}: 1-249 of A-Z a-z 0-9 . _ : -`, { field });
  }
  return stream;
}

/** An Idempotency-Key, or InvalidInputError naming `field`. */
export function checkIdempotencyKey(key: string, field: string): string {
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new InvalidInputError(`${field}: 1-255 visible ASCII characters`, { field });
  }
  return key;
}

/** 404 unless the path's cluster is the Kafka cluster the catalog reads. */
export async function checkCluster(
  rt: { readonly catalog: { clusterId(deadline?: Deadline): Promise<string> } },
  clusterId: string,
  deadline?: Deadline,
): Promise<void> {
  requireCluster(clusterId, await rt.catalog.clusterId(deadline));
}
