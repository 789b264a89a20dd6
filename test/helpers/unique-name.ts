import { randomBytes } from 'node:crypto';

/** A topic or table name no other test (or earlier run against the same services) uses. */
export function uniqueName(purpose: string): string {
  return `test-${purpose}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}
