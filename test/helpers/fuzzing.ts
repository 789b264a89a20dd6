import { vi } from 'vitest';

/**
 * For a fuzzing run: collects unhandled rejections (none may be left) and keeps the tens of
 * thousands of log lines refused inputs write out of the test output. `start` before the
 * run, `stop` after.
 */
export function fuzzingGuard() {
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
