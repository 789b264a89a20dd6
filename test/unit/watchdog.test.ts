import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, waitFor } from '../helpers/processes.js';

const WATCHDOG = 'infra/local/watchdog.mjs';
const started: ChildProcess[] = [];

function sleeper(): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  started.push(child);
  return child;
}

afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
});

describe('local stack watchdog', () => {
  it('kills the guarded process once its parent is gone, then exits', async () => {
    const parent = sleeper();
    const guarded = sleeper();
    const watchdog = spawn(process.execPath, [WATCHDOG, String(parent.pid), String(guarded.pid)]);
    started.push(watchdog);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(isAlive(guarded.pid as number)).toBe(true);
    parent.kill('SIGKILL');
    await waitFor('guarded process to die', () => !isAlive(guarded.pid as number), 5000);
    await waitFor('watchdog to exit', () => watchdog.exitCode !== null, 5000);
    expect(watchdog.exitCode).toBe(0);
  });

  it('exits on its own when the guarded process ends first, leaving the parent alone', async () => {
    const parent = sleeper();
    const guarded = sleeper();
    const watchdog = spawn(process.execPath, [WATCHDOG, String(parent.pid), String(guarded.pid)]);
    started.push(watchdog);
    guarded.kill('SIGTERM');
    await waitFor('watchdog to exit', () => watchdog.exitCode !== null, 5000);
    expect(isAlive(parent.pid as number)).toBe(true);
  });
});
