import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { beforeEach, expect } from 'vitest';

// `npm test` prints test names and failures, not what the functions log. Each line a function
// writes (its JSON log lines and the metrics' EMF blobs) goes to a file per test file under
// test/.logs/ instead of the terminal, and is printed under a failing test, where it helps.
// Anything else written to stdout or stderr passes through untouched.
//
// Each log holds one run: a test file runs in one worker process per run, and that process
// truncates the file when it first writes to it (a worker running several files opens each one
// once), so the logs do not grow across runs.

const TESTS = join(import.meta.dirname, '..');
const DIR = join(TESTS, '.logs');

interface Diverted {
  /** The log file of the test file running now. */
  file?: string;
  /** Its descriptor, open for appending while that file runs. */
  fd?: number;
  /** The log files this process has opened (truncated on the first open). */
  readonly opened: Set<string>;
  /** What the test running now had logged. */
  lines: string[];
  readonly writeStderr: (text: string) => void;
}

const isFunctionOutput = (text: string) =>
  text.startsWith('{"level":') || text.startsWith('{"_aws":');
const KEY = Symbol.for('tally.quietLogs');

/** Patches stdout and stderr once per process (a worker runs several test files). */
function diverted(): Diverted {
  const holder = process as unknown as Record<symbol, Diverted | undefined>;
  const existing = holder[KEY];
  if (existing) return existing;
  const stderrWrite = process.stderr.write.bind(process.stderr);
  const state: Diverted = {
    lines: [],
    opened: new Set(),
    writeStderr: (text) => stderrWrite(text),
  };
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const text =
        typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString() : '';
      if (!isFunctionOutput(text)) return write(chunk, ...rest);
      const line = text.endsWith('\n') ? text : `${text}\n`;
      state.lines.push(line);
      if (state.fd !== undefined) writeSync(state.fd, line);
      (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
      return true;
    }) as typeof stream.write;
  }
  holder[KEY] = state;
  return state;
}

const state = diverted();

/** The lines the functions logged during the test running now, parsed. */
export function loggedLines(): Array<Record<string, unknown>> {
  return state.lines.filter((l) => l.startsWith('{"level":')).map((l) => JSON.parse(l));
}

beforeEach((context) => {
  const testPath = expect.getState().testPath;
  // By the test file's path under test/: unit/core/audit/seq-fates.test.ts and
  // integration/seq-fates.test.ts keep logs of their own.
  const file = testPath ? join(DIR, `${relative(TESTS, testPath)}.log`) : undefined;
  if (file && file !== state.file) {
    mkdirSync(dirname(file), { recursive: true });
    if (state.fd !== undefined) closeSync(state.fd);
    // 'w' the first time this process writes the file in this run, 'a' when it comes back to it.
    state.fd = openSync(file, state.opened.has(file) ? 'a' : 'w');
    state.opened.add(file);
    writeSync(state.fd, `--- ${new Date().toISOString()}\n`);
    state.file = file;
  }
  const lines: string[] = [];
  state.lines = lines;
  context.onTestFailed(() => {
    if (lines.length === 0) return;
    const shown = lines.slice(-200);
    const which = lines.length > shown.length ? `, the last ${shown.length}` : '';
    state.writeStderr(
      `\n--- logged by the functions during "${context.task.name}" (${lines.length} lines${which}; all in ${state.file})\n${shown.join('')}--- end\n`,
    );
  });
});
