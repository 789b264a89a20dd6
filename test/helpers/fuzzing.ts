import { afterAll, beforeAll, vi } from 'vitest';
import { testKafka } from './kafka.js';
import { createTopic } from './publish-client.js';
import { usePublishEnv } from './publish-env.js';
import { uniqueName } from './unique-name.js';

/**
 * For a fuzzing run: collects unhandled rejections (none may be left) and keeps the tens of
 * thousands of log lines refused inputs write out of the test output. `start` before the
 * run, `stop` after.
 */
function fuzzingGuard() {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  const quiet = (stream: NodeJS.WriteStream) => {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: never[]) =>
      String(chunk).startsWith('{"level"')
        ? true
        : write(chunk as string, ...rest)) as typeof stream.write);
  };
  return {
    unhandled,
    start(): void {
      process.on('unhandledRejection', onUnhandled);
      quiet(process.stderr);
      quiet(process.stdout);
    },
    stop(): void {
      vi.restoreAllMocks();
      process.off('unhandledRejection', onUnhandled);
    },
  };
}

/**
 * The setup of a fuzzing file (registers its beforeAll/afterAll): fresh tables and the publish
 * environment (`env` added), a fresh topic of `partitions`, a group with offsets on it, and the
 * guard around the run. `topic` and `group` are set once beforeAll has run.
 */
export function useFuzzing(clientId: string, partitions: number, env: Record<string, string>) {
  const admin = testKafka(clientId).admin();
  const guard = fuzzingGuard();
  const fuzzing = { topic: '', group: '', unhandled: guard.unhandled };
  beforeAll(async () => {
    await usePublishEnv(env);
    await admin.connect();
    fuzzing.topic = await createTopic(admin, partitions);
    // A group Kafka knows (offsets committed on the topic, no members), so the group routes are
    // fuzzed past "no such group" too.
    fuzzing.group = uniqueName('fuzz-group');
    await admin.setOffsets({
      groupId: fuzzing.group,
      topic: fuzzing.topic,
      partitions: Array.from({ length: partitions }, (_, partition) => ({
        partition,
        offset: '0',
      })),
    });
    guard.start();
  });
  afterAll(async () => {
    guard.stop();
    await admin.disconnect();
  });
  return fuzzing;
}
