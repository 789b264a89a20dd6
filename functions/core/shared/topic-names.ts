// Topic rules applied before anything reaches a Kafka client (seed 000, KAFKA-1884): an illegal
// or unexpected name must fail fast and never enter a producer's metadata set.

const LEGAL = /^[a-zA-Z0-9._-]+$/;
export const MAX_TOPIC_NAME_LENGTH = 249;

/** Why `name` is not a legal Kafka topic name, or undefined when it is. */
export function topicNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'topic name must not be empty';
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    return `topic name is ${name.length} characters; at most ${MAX_TOPIC_NAME_LENGTH} are allowed`;
  }
  if (name === '.' || name === '..') return `topic name must not be "${name}"`;
  if (!LEGAL.test(name)) {
    return 'topic name may contain only ASCII letters, digits, ".", "_" and "-"';
  }
  return undefined;
}

/** `__consumer_offsets`, `__transaction_state` and every other `__*` topic belong to Kafka. */
export function isInternalTopic(name: string): boolean {
  return name.startsWith('__');
}

/**
 * Compiles topic patterns (`*` any run of characters, `?` one character, anything else literal)
 * into a predicate. No patterns means every topic is allowed.
 */
export function topicAllowList(patterns: readonly string[]): (topic: string) => boolean {
  if (patterns.length === 0) return () => true;
  const expressions = patterns.map(
    (pattern) =>
      new RegExp(
        `^${pattern
          .split('')
          .map((c) =>
            c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\-]/g, '\\$&'),
          )
          .join('')}$`,
      ),
  );
  return (topic) => expressions.some((expression) => expression.test(topic));
}
