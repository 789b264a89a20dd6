import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The layering rules `npm run lint` checks (.dependency-cruiser.cjs), run on a small tree that
// breaks each of them once: a checker that passes the project's own tree must also be shown to
// fail where it should, or it proves nothing.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

const planted: Record<string, string> = {
  // An orchestrator and its helper importing each other.
  'functions/core/publish/publisher.ts':
    "import { plan } from './plan.js';\nexport const run = () => plan();\n",
  'functions/core/publish/plan.ts':
    "import type { run } from './publisher.js';\nexport const plan = (): ReturnType<typeof run> | undefined => undefined;\n",
  // Core reaching for a vendor library, the platform, an adapter and the Lambda types.
  'functions/core/audit/scan.ts':
    "import { Kafka } from 'kafkajs';\nimport { log } from '../../platform/log.js';\nimport { ledger } from '../../adapters/dynamodb/ledger.js';\nimport type { MSKRecord } from 'aws-lambda';\nexport const scan = (r?: MSKRecord) => [Kafka, log, ledger, r];\n",
  // Core doing file I/O itself.
  'functions/core/audit/report-file.ts':
    "import { writeFileSync } from 'node:fs';\nexport const save = () => writeFileSync;\n",
  // An adapter importing the platform.
  'functions/adapters/dynamodb/ledger.ts':
    "import { log } from '../../platform/log.js';\nexport const ledger = () => log;\n",
  'functions/platform/log.ts': 'export const log = () => undefined;\n',
  // One function's folder importing another's.
  'functions/canary/handler.ts':
    "import { send } from '../publish/runtime.js';\nexport const handler = send;\n",
  'functions/publish/runtime.ts': 'export const send = () => undefined;\n',
  // A function importing the local stack.
  'functions/receipts/handler.ts':
    "import { start } from '../../infra/local/stack.js';\nexport const handler = start;\n",
  'infra/local/stack.ts': 'export const start = () => undefined;\n',
  // An installable package whose shared code reaches the Lambda runtime's platform.
  'packages/consumer/src/index.ts':
    "export { tallyOnce } from '../../../functions/consumer/tally-once.js';\n",
  'functions/consumer/tally-once.ts':
    "import { log } from '../platform/log.js';\nexport const tallyOnce = () => log;\n",
};

let dir = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tally-architecture-'));
  for (const [file, text] of Object.entries(planted)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  copyFileSync(join(root, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  copyFileSync(join(root, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The checker as `npm run lint` runs it (its exit code), and again for its findings as JSON. */
async function cruise(outputType: 'err' | 'json'): Promise<{ code: number; stdout: string }> {
  const bin = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
  const args = [
    bin,
    'functions',
    'infra',
    'packages',
    '--config',
    '.dependency-cruiser.cjs',
    '-T',
    outputType,
  ];
  try {
    const { stdout } = await run(process.execPath, args, { cwd: dir, maxBuffer: 64 << 20 });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

describe('the architecture rules of npm run lint', () => {
  it('fail on each planted break, naming the rule and both files', async () => {
    const lint = await cruise('err');
    // The exit code is the number of errors.
    expect(lint.code, lint.stdout).toBe(10);
    expect(lint.stdout).toContain('no-circular: functions/core/publish/plan.ts');
    const violations: Violation[] = JSON.parse((await cruise('json')).stdout).summary.violations;
    // node_modules is a link to the project's: a vendor file is named from node_modules on.
    const name = (file: string) => file.replace(/^.*node_modules\//, 'node_modules/');
    const found = violations.map((v) => `${v.rule.name}: ${v.from} → ${name(v.to)}`).sort();
    expect(found).toEqual(
      [
        'adapters-import-no-platform: functions/adapters/dynamodb/ledger.ts → functions/platform/log.ts',
        'core-imports-no-node-io: functions/core/audit/report-file.ts → fs',
        'core-is-pure: functions/core/audit/scan.ts → aws-lambda',
        'core-is-pure: functions/core/audit/scan.ts → functions/adapters/dynamodb/ledger.ts',
        'core-is-pure: functions/core/audit/scan.ts → functions/platform/log.ts',
        'core-is-pure: functions/core/audit/scan.ts → node_modules/kafkajs/index.js',
        'function-imports-no-other-function: functions/canary/handler.ts → functions/publish/runtime.ts',
        'functions-import-no-tests-or-infra: functions/receipts/handler.ts → infra/local/stack.ts',
        'no-circular: functions/core/publish/plan.ts → functions/core/publish/publisher.ts',
        'packages-ship-no-platform: packages/consumer/src/index.ts → functions/platform/log.ts',
      ].sort(),
    );
  }, 60_000);
});
