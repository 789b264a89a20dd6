import type { Kafka } from 'kafkajs';

/** The cluster's id, asked once per container (it never changes) with a short-lived admin. */
export function createClusterIdentity(kafka: Kafka) {
  let id: Promise<string> | undefined;
  return () => {
    id ??= (async () => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        return (await admin.describeCluster()).clusterId;
      } finally {
        await admin.disconnect();
      }
    })().catch((error: unknown) => {
      id = undefined;
      throw error;
    });
    return id;
  };
}
