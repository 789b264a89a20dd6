import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type DocExample,
  docExamples,
  fillPlaceholders,
  placeholdersLeft,
  runShellBlocks,
  type ShellRun,
  type StackValues,
  shownOutputs,
} from '../helpers/doc-examples.js';
import { type NpmStartStack, startNpmStart } from '../helpers/npm-start.js';

// Docs are tests: every fenced example of README.md and docs/*.md is run here against `npm start`
// (the shared broker, a DynamoDB API of its own, so the docs' `orders` and `billing` start
// empty), or is marked in the doc, just above the block, with why not (`<!-- not run: … -->`) or
// which test runs it (`<!-- run by: test/… -->`: docs/deploy.md's commands are run by
// deploy-template.test.ts). A doc's `sh` blocks run in one bash, in order, with the variables
// its examples assume (API, AUTH, KAFKA, CLUSTER, SM); the placeholders a reader edits are filled
// from the ready line. A command that fails, or a curl answered 400 or more, fails the doc; so
// does an output shown in a comment (`# {"error_code":200,…}`) that the block did not print.

const DOCS = ['README.md', ...readdirSync('docs').map((name) => `docs/${name}`)]
  .filter((file) => file.endsWith('.md'))
  .sort((a, b) => (a === 'README.md' ? -1 : b === 'README.md' ? 1 : a.localeCompare(b)));
const EXAMPLES = DOCS.flatMap((file) => docExamples(file));
/** Info strings of blocks that are not examples: diagrams and printed output. */
const NOT_EXAMPLES = new Set(['text']);
const examples = EXAMPLES.filter((e) => !NOT_EXAMPLES.has(e.info));
const at = (e: DocExample) => `${e.file}:${e.line}`;
const runHere = (e: DocExample) => e.mark.kind === 'run';
const shellDocs = DOCS.filter((file) =>
  examples.some((e) => e.file === file && e.info === 'sh' && runHere(e)),
);

describe('the docs: every example is run, or marked with why not', () => {
  it('names what each fenced block is, and each example is run here, by a test, or marked', () => {
    for (const e of EXAMPLES) expect(['sh', 'ts', 'json', 'text'], at(e)).toContain(e.info);
    for (const e of examples) {
      if (e.mark.kind === 'not-run') expect(e.mark.reason.length, at(e)).toBeGreaterThan(10);
      if (e.mark.kind === 'run-by') {
        const test = e.mark.test.split(' ')[0] as string;
        expect(existsSync(test), `${at(e)}: ${test}`).toBe(true);
      }
      // Only shell and JSON run here: a TypeScript fragment is marked with the file it is from.
      if (e.info === 'ts') expect(e.mark.kind, at(e)).not.toBe('run');
    }
    const count = (kind: string) => examples.filter((e) => e.mark.kind === kind).length;
    process.stderr.write(
      `doc examples: ${examples.length} in ${DOCS.length} files; run here ${count('run')}, ` +
        `run by another test ${count('run-by')}, not run (marked) ${count('not-run')}\n`,
    );
    expect(count('run')).toBeGreaterThanOrEqual(9);
  });

  it('parses every JSON example', () => {
    const json = examples.filter((e) => e.info === 'json' && runHere(e));
    expect(json.length).toBeGreaterThan(0);
    for (const e of json) expect(() => JSON.parse(e.code), at(e)).not.toThrow();
  });
});

describe('the docs, run against npm start', () => {
  const work = mkdtempSync(join(tmpdir(), 'tally-docs-'));
  let npmStart: NpmStartStack | undefined;
  let stack: StackValues;
  let cluster = '';
  const runs = new Map<string, { run: ShellRun; cwd: string }>();

  beforeAll(async () => {
    // npm start on the shared broker, with a DynamoDB API of its own (test/helpers/npm-start.ts).
    npmStart = await startNpmStart({ kafkaBrokers: inject('kafkaBrokers') });
    stack = npmStart;
    cluster = npmStart.clusterId;
  });

  afterAll(async () => {
    await npmStart?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  async function runDoc(file: string): Promise<void> {
    const blocks = examples.filter((e) => e.file === file && e.info === 'sh' && runHere(e));
    const code = blocks.map((e) => fillPlaceholders(e.code, stack));
    code.forEach((text, i) => {
      expect(placeholdersLeft(text), at(blocks[i] as DocExample)).toEqual([]);
    });
    const cwd = mkdtempSync(join(work, 'reader-'));
    const run = await runShellBlocks(code, {
      cwd,
      // The reader's terminal: in the repository's folder, whose kafkajs the snippets use.
      env: {
        ...process.env,
        NODE_PATH: resolve('node_modules'),
        API: stack.api,
        AUTH: `authorization: Bearer ${stack.token}`,
        KAFKA: stack.kafka,
        CLUSTER: cluster,
        SM: stack.stateMachines,
      },
      timeoutMs: 120_000,
    });
    runs.set(file, { run, cwd });
    const failed = blocks[run.outputs.length - 1];
    expect(
      run.code,
      `${failed ? at(failed) : file} failed:\n${run.outputs.at(-1)}\n${run.stderr.slice(-4000)}`,
    ).toBe(0);
    blocks.forEach((block, i) => {
      for (const shown of shownOutputs(block.code)) {
        expect(run.outputs[i], `${at(block)}: the output its comment shows`).toMatch(shown);
      }
    });
  }

  // In the docs' order: README's tour first, as a reader would; the others build on its topic.
  for (const file of shellDocs) {
    it(`runs ${file}'s shell examples`, async () => {
      await runDoc(file);
    });
  }

  it("the tour's report shows the rewind's redeliveries, and its lease rest as unrecorded", () => {
    const tour = runs.get('README.md')?.run.outputs.join('') ?? '';
    const reader = runs.get('README.md')?.cwd ?? '';
    // The consumer's two runs: partition 0's seqs, then those after the rewound commit again.
    const processed = [...tour.matchAll(/billing processed orders seqs ([\d ]+) from partition 0/g)]
      .flatMap((m) => (m[1] ?? '').split(' ').map(Number))
      .sort((a, b) => a - b);
    expect(processed).toEqual([2, 3, 3, 4, 4, 5, 5, 6, 6]);
    const report = JSON.parse(readFileSync(join(reader, 'audit.json'), 'utf8'));
    const orders = report.streams.find((s: { stream: string }) => s.stream === 'orders');
    expect(orders.consumerDuplicates).toEqual([
      expect.objectContaining({ group: 'billing', from: 3, to: 6, times: 2 }),
    ]);
    expect(orders.buckets[0]).toMatchObject({
      redelivered: { billing: 4 },
      actedTwice: { billing: 4 },
    });
    // Seqs past the sixth are the lease's rest: allocated, not yet judged.
    const shown = /allocated (\d+), unrecorded (\S+)/.exec(tour);
    const allocated = Number(shown?.[1]);
    expect(allocated).toBeGreaterThanOrEqual(6);
    expect(JSON.parse(shown?.[2] ?? '')).toEqual(allocated > 6 ? [[7, allocated]] : []);
    const html = readFileSync(join(reader, 'audit.html'), 'utf8');
    // The page's tile for the group, and its row in the consumer-side duplicates.
    expect(html).toMatch(/redelivered · billing<\/div><div class="tile-value">4</);
    expect(html).toContain('<td>billing</td><td>3–6</td><td>2</td>');
  });
});
