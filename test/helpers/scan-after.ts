import type { ScanRequest, ScanResult } from '../../functions/core/audit/ports.js';

/**
 * As the Kafka scanner does with `after`: a fake scan calls this before its first record; it
 * waits for the caller's promise and gives the result to return when that failed (no record).
 */
export async function scanRefusedAfter(request: ScanRequest): Promise<ScanResult | undefined> {
  if (request.after === undefined) return undefined;
  const ok = await request.after.then(
    () => true,
    () => false,
  );
  return ok ? undefined : { scanned: 0, next: new Map(), logStart: new Map(), complete: false };
}
