import type { Admin } from 'kafkajs';

/** The cluster's id, asked once per container (it never changes); a failure is asked again. */
export function createClusterIdentity(admin: () => Promise<Admin>): () => Promise<string> {
  let id: Promise<string> | undefined;
  return () => {
    id ??= admin()
      .then((client) => client.describeCluster())
      .then((cluster) => cluster.clusterId)
      .catch((error: unknown) => {
        id = undefined;
        throw error;
      });
    return id;
  };
}
