import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../../bench/harness.js';
import { runSection } from '../../../bench/section-runner.js';

// Planted sections, run as bench/run.ts runs the real ones: what breaks a section must fail it.
const dir = mkdtempSync(join(tmpdir(), 'tally-bench-runner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EMF_LINE = '{"_aws":{"CloudWatchMetrics":[]},"service":"publish","RecordsAcked":1}';
const FIGURES = ['single.p50Ms', 'batch.*.recordsPerSecond'];
const RESULT = { table: '| x |', single: { p50Ms: 3.2 }, batch: [{ recordsPerSecond: 18_000 }] };

function section(name: string, source: string): string {
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, source);
  return file;
}

const run = (name: string, file: string, timeoutMs?: number) =>
  runSection(name, {
    file,
    figures: FIGURES,
    env: process.env,
    logDir: dir,
    cwd: ROOT,
    ...(timeoutMs !== undefined && { timeoutMs }),
  });

/** A section through the harness, as the real ones: `result` is written by writeResults. */
const harnessSection = (result: object, before = '') => `
import { logStdoutToFile, writeResults } from ${JSON.stringify(join(ROOT, 'bench/harness.ts'))};
logStdoutToFile('planted');
console.log(${JSON.stringify(EMF_LINE)}); // a function's EMF metric line, as publish's handler writes
${before}
const { table, ...summary } = ${JSON.stringify(result)};
writeResults('planted', { at: new Date().toISOString(), ...summary }, table, false);
console.log('a log line after the JSON');
`;

// Each case starts node with tsx (and the harness): seconds on a loaded 2-core machine, past
// Vitest's 5 s default there; nothing here sleeps.
describe('bench section runner', { timeout: 60_000 }, () => {
  it("takes a section's JSON from its result file, its stdout going to its log", async () => {
    const file = section('clean', harnessSection(RESULT));
    const json = await run('clean', file);
    expect(json).toMatchObject({ single: { p50Ms: 3.2 }, batch: [{ recordsPerSecond: 18_000 }] });
    const log = readFileSync(join(dir, 'clean.log'), 'utf8');
    expect(log).toContain(EMF_LINE);
    expect(log).toContain('a log line after the JSON');
  });

  it('fails a section that omits a figure, naming it', async () => {
    const { single: _omitted, ...rest } = RESULT;
    const file = section('omits', harnessSection(rest));
    await expect(run('omits', file)).rejects.toThrow(/figures: single\.p50Ms: missing/);
  });

  it('fails a section whose figure is not a number (NaN prints as null)', async () => {
    const file = section('nan', harnessSection({ ...RESULT, batch: [{ recordsPerSecond: null }] }));
    await expect(run('nan', file)).rejects.toThrow(/batch\.0\.recordsPerSecond: null/);
  });

  it('fails a negative duration', async () => {
    const file = section('negative', harnessSection({ ...RESULT, phasesMs: { other: -4667 } }));
    await expect(run('negative', file)).rejects.toThrow(/phasesMs\.other: -4667, a negative/);
  });

  it('fails a section that prints its JSON on stdout after a log line (the old way)', async () => {
    const file = section(
      'stdout',
      `console.log(${JSON.stringify(EMF_LINE)});\nconsole.log(${JSON.stringify(JSON.stringify(RESULT))});`,
    );
    await expect(run('stdout', file)).rejects.toThrow(/wrote no result to BENCH_RESULT_FILE/);
  });

  it('fails a result file that is not JSON', async () => {
    const file = section(
      'broken',
      'import { writeFileSync } from "node:fs";\nwriteFileSync(String(process.env.BENCH_RESULT_FILE), "{\\"table\\": ");',
    );
    await expect(run('broken', file)).rejects.toThrow(
      /wrote no JSON to .*broken\.json: SyntaxError/,
    );
  });

  it('fails a section that exits non-zero', async () => {
    await expect(run('exits', section('exits', 'process.exit(3);'))).rejects.toThrow(
      /exited with 3; its stdout and events: .*exits\.log/,
    );
  });

  it('fails a section that runs over its time', async () => {
    const stuck = section('stuck', 'setInterval(() => {}, 1000);');
    await expect(run('stuck', stuck, 1500)).rejects.toThrow(/ran over 1500 ms/);
  });
});
