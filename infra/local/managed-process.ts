import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const WATCHDOG = fileURLToPath(new URL('./watchdog.mjs', import.meta.url));

export interface ManagedProcessOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** stdout and stderr are appended here. */
  readonly logFile: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Removed by the watchdog once it has ended the process because its parent died. */
  readonly removeWhenOrphaned?: readonly string[];
}

/**
 * A child process of the local stack that cannot outlive its parent: `stop()` ends it
 * gracefully, `killNow()` ends it synchronously (for `process.on('exit')`), and a detached
 * watchdog ends it if the parent dies without doing either.
 */
export class ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or the signal name) once the process has ended. */
  readonly exited: Promise<number | string>;
  readonly #child: ChildProcess;
  #hasExited = false;

  private constructor(name: string, child: ChildProcess, pid: number, logFile: string) {
    this.name = name;
    this.#child = child;
    this.pid = pid;
    this.logFile = logFile;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#hasExited = true;
        resolve(code ?? signal ?? 'unknown');
      });
    });
  }

  static async start(options: ManagedProcessOptions): Promise<ManagedProcess> {
    const log = openSync(options.logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(options.command, options.args, {
        cwd: options.cwd,
        env: options.env ?? process.env,
        stdio: ['ignore', log, log],
      });
    } finally {
      closeSync(log);
    }
    try {
      await once(child, 'spawn');
    } catch (error) {
      throw new Error(`could not start ${options.name} (${options.command}): ${String(error)}`, {
        cause: error,
      });
    }
    const pid = child.pid;
    if (pid === undefined) {
      throw new Error(`could not start ${options.name}: no process id`);
    }
    spawn(
      process.execPath,
      [WATCHDOG, String(process.pid), String(pid), ...(options.removeWhenOrphaned ?? [])],
      {
        detached: true,
        stdio: 'ignore',
      },
    ).unref();
    return new ManagedProcess(options.name, child, pid, options.logFile);
  }

  get running(): boolean {
    return !this.#hasExited;
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.#child.kill('SIGTERM');
    const timeout = new Promise<'timeout'>((resolve) => {
      setTimeout(() => resolve('timeout'), graceMs).unref();
    });
    if ((await Promise.race([this.exited, timeout])) === 'timeout') {
      this.#child.kill('SIGKILL');
      await this.exited;
    }
  }

  /** Synchronous last resort for exit handlers, where nothing can be awaited. */
  killNow(): void {
    if (this.running) this.#child.kill('SIGKILL');
  }
}
