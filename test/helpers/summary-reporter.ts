import { relative } from 'node:path';
import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/** How many of the longest files the run's end names. */
const SLOWEST = 6;

/**
 * Ends the run with one plain line, `tests: N passed, N failed[, N skipped]`, that tools
 * reading a CI log can count without parsing Vitest's colourful summary; before it, the files
 * that took longest (where `npm test`'s time goes).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
  ): void {
    // An error outside any test (a crashed setup, an unhandled rejection) fails the run.
    const counts = { passed: 0, failed: unhandledErrors.length, skipped: 0 };
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed' || state === 'failed') counts[state]++;
        else counts.skipped++;
      }
      // A file whose setup failed has only skipped tests, but is a failure all the same.
      const failedTests = [...testModule.children.allTests('failed')].length;
      if (testModule.state() === 'failed' && failedTests === 0) counts.failed++;
    }
    const slowest = [...testModules]
      .map((m) => ({ file: m.moduleId, ms: m.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST)
      .map(({ file, ms }) => `${relative(process.cwd(), file)} ${(ms / 1000).toFixed(1)} s`);
    if (slowest.length > 1) process.stdout.write(`\nslowest files: ${slowest.join(', ')}\n`);
    const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : '';
    process.stdout.write(`\ntests: ${counts.passed} passed, ${counts.failed} failed${skipped}\n`);
  }
}
