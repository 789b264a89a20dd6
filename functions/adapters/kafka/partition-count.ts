import type { Kafka } from 'kafkajs';
import { DependencyUnavailableError, NotFoundError } from '../../core/shared/errors.js';
import { isStaleTopicError, lazyAdmin } from './lazy-admin.js';

/**
 * How many partitions a topic has now, from the cluster's metadata for that topic alone. A topic
 * that does not exist is a NotFoundError naming the field `topic` (and the admin client, which now
 * holds it as a metadata target, is replaced); no answer is a DependencyUnavailableError.
 */
export function createPartitionCount(kafka: Kafka): (topic: string) => Promise<number> {
  const admin = lazyAdmin(kafka);
  return async (topic) => {
    try {
      const { topics } = await (await admin()).fetchTopicMetadata({ topics: [topic] });
      return topics[0]?.partitions.length ?? 0;
    } catch (error) {
      if (isStaleTopicError(error)) {
        admin.reset();
        throw new NotFoundError(`topic: ${topic} does not exist in this cluster`, {
          field: 'topic',
          cause: error,
        });
      }
      throw new DependencyUnavailableError(`Kafka did not describe ${topic}`, { cause: error });
    }
  };
}
