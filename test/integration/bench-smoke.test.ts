import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ROOT } from '../../bench/harness.js';
import { figureProblems, SECTIONS } from '../../bench/sections.js';

// `npm run bench -- --smoke` on the test stack's Kafka and DynamoDB: every section, the
// on-request auditHorizon too, at a tiny size through the same code as the full run. A section
// whose JSON breaks (a line on its stdout, a figure gone, a negative duration) fails here.
const dir = mkdtempSync(join(tmpdir(), 'tally-bench-smoke-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Summary {
  smoke: boolean;
  failed: string[];
  sections: Record<string, unknown>;
  sectionSeconds: Record<string, number>;
}

describe('npm run bench -- --smoke', () => {
  it('runs every section to the end, each printing every figure of its table', async () => {
    const resultFile = join(dir, 'summary.json');
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke'], {
      cwd: ROOT,
      env: {
        ...process.env,
        KAFKA_BROKERS: inject('kafkaBrokers'),
        DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
        BENCH_RESULT_FILE: resultFile,
        BENCH_LOG_DIR: dir,
        // The local HTTP API bundles every function before it answers: ~40 s quiet, past the
        // default 120 s beside a second suite (this file failed there with no section named).
        TALLY_LOCAL_API_START_SECONDS: '300',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    const failures = stderr.split('\n').filter((line) => / failed: /.test(line));
    expect(failures).toEqual([]);
    expect(code, stderr.slice(-4000)).toBe(0);
    const summary = JSON.parse(readFileSync(resultFile, 'utf8')) as Summary;
    expect(summary.smoke).toBe(true);
    expect(summary.failed).toEqual([]);
    // Checked here too, not only by run.ts: each section's JSON against its figures.
    for (const [name, section] of Object.entries(SECTIONS)) {
      expect(summary.sections[name], name).toBeDefined();
      expect(figureProblems(summary.sections[name], section.figures), name).toEqual([]);
      expect(summary.sectionSeconds[name], name).toBeGreaterThanOrEqual(0);
    }
    // The functions' EMF lines went to publish's log, not into its JSON.
    expect(readFileSync(join(dir, 'publish.log'), 'utf8')).toContain('"_aws"');
  });
});
