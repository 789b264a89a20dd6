import type { Admin, Kafka } from 'kafkajs';

/**
 * A kafkajs client keeps every topic it ever asked about as a metadata target, refreshes them all
 * together, and fails every later call once one of them is deleted. Such a client must be
 * replaced (`reset()`).
 */
export function isStaleTopicError(error: unknown): boolean {
  const e = error as { type?: string; cause?: { type?: string } } | null;
  return (
    e?.type === 'UNKNOWN_TOPIC_OR_PARTITION' || e?.cause?.type === 'UNKNOWN_TOPIC_OR_PARTITION'
  );
}

/**
 * One admin client per container, connected on first use; a failed connect is retried later.
 * `reset()` replaces it (see isStaleTopicError); `close()` disconnects it (scripts and tests that
 * must let the process exit).
 */
export function lazyAdmin(
  kafka: Kafka,
): (() => Promise<Admin>) & { close(): Promise<void>; reset(): void } {
  let admin: Promise<Admin> | undefined;
  const connected = () => {
    admin ??= (async () => {
      const client = kafka.admin();
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      admin = undefined;
      throw error;
    });
    return admin;
  };
  return Object.assign(connected, {
    reset() {
      const current = admin;
      admin = undefined;
      void current?.then((client) => client.disconnect()).catch(() => {});
    },
    async close() {
      const current = admin;
      admin = undefined;
      if (current) await (await current).disconnect();
    },
  });
}
