import { defineConfig } from 'vitest/config';

// What the functions log goes to test/.logs/<file>.log, shown under a failing test.
const setupFiles = ['test/helpers/quiet-logs.ts'];

export default defineConfig({
  test: {
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          setupFiles,
          include: ['test/unit/**/*.test.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          // Months of schedules on an injected clock and clusters at a large user's size: no
          // services, minutes of CPU (npm test runs them; npm run test:unit does not).
          name: 'simulation',
          setupFiles,
          include: ['test/simulation/**/*.test.ts'],
          sequence: { groupOrder: 0 },
          testTimeout: 300_000,
        },
      },
      {
        test: {
          name: 'integration',
          // Every HTTP exchange is checked against the OpenAPI document.
          setupFiles: [...setupFiles, 'test/helpers/openapi-hook.ts'],
          include: ['test/integration/**/*.test.ts'],
          sequence: { groupOrder: 1 },
          // One local stack (Kafka + DynamoDB) for the whole run; tests use unique names.
          globalSetup: ['test/helpers/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Two cores: files that start brokers of their own must not pile up.
          maxWorkers: 2,
        },
      },
    ],
  },
});
