import type { Admin, Kafka } from 'kafkajs';

/**
 * One admin client per container, connected on first use; a failed connect is retried later.
 * `close()` disconnects it (scripts and tests that must let the process exit).
 */
export function lazyAdmin(kafka: Kafka): (() => Promise<Admin>) & { close(): Promise<void> } {
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
    async close() {
      const current = admin;
      admin = undefined;
      if (current) await (await current).disconnect();
    },
  });
}
