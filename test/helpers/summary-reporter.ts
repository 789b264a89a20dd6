import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain line, `tests: N passed, N failed[, N skipped]`, that tools
 * reading a CI log can count without parsing Vitest's colourful summary.
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
    const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : '';
    process.stdout.write(`\ntests: ${counts.passed} passed, ${counts.failed} failed${skipped}\n`);
  }
}
