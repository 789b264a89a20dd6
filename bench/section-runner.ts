// One benchmark section in a process of its own, as bench/run.ts runs each: its JSON comes from
// the file BENCH_RESULT_FILE names (nothing else writes there: the functions' EMF metric and log
// lines, a library's output, go to stdout, which goes to the section's log file), and is checked
// against the figures its table shows, so a section cannot break silently: a figure missing or
// not a number, a negative duration, no JSON at all each fail the section by name.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { figureProblems } from './sections.js';

export interface SectionRun {
  /** The section's file, run with `node --import tsx`. */
  readonly file: string;
  /** Paths of its figures (see sections.ts). */
  readonly figures: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Where `<name>.json` (its result) and `<name>.log` (its stdout and events) go. */
  readonly logDir: string;
  readonly cwd: string;
  /** Killed after this long (smoke runs), else unbounded. */
  readonly timeoutMs?: number;
}

/** Runs section `name`; resolves with its checked JSON, rejects saying what broke. */
export function runSection(name: string, run: SectionRun): Promise<Record<string, unknown>> {
  const resultFile = join(run.logDir, `${name}.json`);
  const logFile = join(run.logDir, `${name}.log`);
  rmSync(resultFile, { force: true });
  const out = openSync(logFile, 'a');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', run.file], {
      cwd: run.cwd,
      env: { ...run.env, BENCH_RESULT_FILE: resultFile, BENCH_LOG_FILE: logFile },
      stdio: ['ignore', out, 'inherit'],
    });
    closeSync(out); // the child holds its own copy
    let timedOut = false;
    const timer =
      run.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 5000).unref();
          }, run.timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      const seeLog = `its stdout and events: ${logFile}`;
      if (timedOut) return reject(new Error(`${run.file} ran over ${run.timeoutMs} ms; ${seeLog}`));
      if (code !== 0) {
        return reject(new Error(`${run.file} exited with ${code ?? signal}; ${seeLog}`));
      }
      if (!existsSync(resultFile)) {
        return reject(
          new Error(`${run.file} wrote no result to BENCH_RESULT_FILE (${resultFile}); ${seeLog}`),
        );
      }
      let json: unknown;
      try {
        json = JSON.parse(readFileSync(resultFile, 'utf8'));
      } catch (error) {
        return reject(new Error(`${run.file} wrote no JSON to ${resultFile}: ${String(error)}`));
      }
      const problems = figureProblems(json, run.figures);
      if (problems.length > 0) {
        return reject(new Error(`${run.file}'s figures: ${problems.join('; ')} (${resultFile})`));
      }
      resolve(json as Record<string, unknown>);
    });
  });
}
