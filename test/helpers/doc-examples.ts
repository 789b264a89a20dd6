import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

// The fenced examples of a Markdown file, and how each is checked. A block's info string says
// what it is: `sh` (run against the local stack), `json` (parsed), `ts` (a fragment of a file
// the type-check covers), `text` (a diagram or an output: not an example). The line just before
// a block may say why it is not run here, visibly in the doc:
//   <!-- not run: needs an AWS account -->
//   <!-- run by: test/integration/deploy-template.test.ts -->

export type DocMark =
  | { readonly kind: 'run' }
  | { readonly kind: 'not-run'; readonly reason: string }
  | { readonly kind: 'run-by'; readonly test: string };

export interface DocExample {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly info: string;
  readonly code: string;
  readonly mark: DocMark;
}

const FENCE = /^```(.*)$/;
const MARK = /^<!-- (not run|run by): (.+?) -->$/;

export function docExamples(file: string): DocExample[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const examples: DocExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '');
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
    if (end < 0) throw new Error(`${file}:${i + 1}: a fence that does not close`);
    const marked = MARK.exec(lines[i - 1] ?? '');
    const mark: DocMark = !marked
      ? { kind: 'run' }
      : marked[1] === 'not run'
        ? { kind: 'not-run', reason: marked[2] as string }
        : { kind: 'run-by', test: marked[2] as string };
    examples.push({
      file,
      line: i + 1,
      info: (open[1] ?? '').trim(),
      code: lines.slice(i + 1, end).join('\n'),
      mark,
    });
    i = end;
  }
  return examples;
}

export interface StackValues {
  readonly api: string;
  readonly kafka: string;
  readonly token: string;
  readonly stateMachines: string;
}

/**
 * The doc's placeholders filled with the stack's values (the lines a reader edits by hand:
 * `API=http://127.0.0.1:<api port>`, `Bearer <token>`, `KAFKA=127.0.0.1:<kafka port>`).
 */
export function fillPlaceholders(code: string, stack: StackValues): string {
  return code
    .replace(/^API=http:\/\/127\.0\.0\.1:<[^>]+>/gm, `API=${stack.api}`)
    .replace(/KAFKA=127\.0\.0\.1:<[^>]+>/g, `KAFKA=${stack.kafka}`)
    .replace(/Bearer <[^>]+>/g, `Bearer ${stack.token}`);
}

/** Placeholders left in the commands (comments aside): such a block cannot run as written. */
export function placeholdersLeft(code: string): string[] {
  return code
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, ''))
    .flatMap((line) => [...line.matchAll(/<[a-z][^<>]*>/gi)].map((m) => m[0]));
}

export interface ShellRun {
  readonly code: number | null;
  /** stdout per block, in order; a block that did not run has none. */
  readonly outputs: string[];
  readonly stderr: string;
}

const BLOCK = '::tally-doc-block::';

/**
 * Runs a doc's `sh` blocks in one bash, in order (a block uses what the ones before it set, as a
 * reader's terminal does). Stops at the first failing command: `set -e`, and curl fails on an
 * HTTP status of 400 or more (the body is still printed).
 */
export function runShellBlocks(
  blocks: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<ShellRun> {
  const script = [
    'set -eo pipefail',
    'curl() { command curl --fail-with-body --max-time 60 "$@"; }',
    ...blocks.flatMap((block) => [`echo '${BLOCK}'`, block]),
    '',
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, outputs: stdout.split(`${BLOCK}\n`).slice(1), stderr });
    });
  });
}

/**
 * The outputs a block shows in comments (`# {"error_code":200,…}`, continued on `#  …` lines),
 * each as a pattern: `…` stands for anything.
 */
export function shownOutputs(code: string): RegExp[] {
  const shown: string[] = [];
  for (const line of code.split('\n')) {
    const comment = /^\s*# ?(.*)$/.exec(line)?.[1];
    if (comment === undefined) continue;
    if (/^[{[]"/.test(comment)) shown.push(comment);
    else if (/^ \S/.test(comment) && shown.length > 0 && !/[}\]]$/.test(shown.at(-1) ?? '')) {
      shown[shown.length - 1] += comment.trim();
    }
  }
  return shown.map(
    (text) =>
      new RegExp(
        text
          .split('…')
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*?'),
      ),
  );
}
