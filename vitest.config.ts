import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
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
