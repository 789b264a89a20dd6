// Shared by the audit's runs and the fan-out children (fan-out-child.ts), which load no more.

/**
 * When a run must stop reading the log: within the configured scan time, and early enough in the
 * invocation to compare, settle and save (a quarter of what is left, 2–60 s).
 */
export function scanDeadline(now: number, remainingMs: number, scanTimeoutMs: number): number {
  const reserve = Math.min(60_000, Math.max(2000, remainingMs / 4));
  return now + Math.max(0, Math.min(scanTimeoutMs, remainingMs - reserve));
}
