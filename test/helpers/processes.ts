import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly state: string;
  readonly command: string;
}

function readProcess(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const [state = '', ppid = '0'] = stat.slice(close + 2).split(' ');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return { pid, ppid: Number(ppid), state, command };
  } catch {
    return undefined; // exited while we looked
  }
}

/** Every living descendant of `root` (children, grandchildren, …), from /proc. */
export function descendants(root: number): ProcessInfo[] {
  const all = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => readProcess(Number(entry)))
    .filter((info): info is ProcessInfo => info !== undefined && info.state !== 'Z');
  const found: ProcessInfo[] = [];
  const parents = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const info of all) {
      if (parents.has(info.ppid) && !parents.has(info.pid)) {
        parents.add(info.pid);
        found.push(info);
        grew = true;
      }
    }
  }
  return found;
}

/** Alive and not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  const info = readProcess(pid);
  return info !== undefined && info.state !== 'Z' && info.state !== 'X';
}

export async function waitFor(
  what: string,
  condition: () => boolean,
  timeoutMs: number,
  /** Runs before each check (say, to fetch what the condition looks at). */
  poll: () => Promise<void> = async () => {},
): Promise<number> {
  const started = Date.now();
  for (;;) {
    await poll();
    if (condition()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface LineWatcher {
  readonly lines: string[];
  /** Resolves with the first line matching `pattern`, rejects on exit or after `timeoutMs`. */
  next(pattern: RegExp, timeoutMs: number): Promise<string>;
}

/** Collects a child's stdout lines (or its stderr's: `npm start` logs there). */
export function watchLines(
  child: ChildProcess,
  stream: 'stdout' | 'stderr' = 'stdout',
): LineWatcher {
  const lines: string[] = [];
  let buffered = '';
  child[stream]?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
  });
  return {
    lines,
    next: (pattern, timeoutMs) =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const check = setInterval(() => {
          const line = lines.find((candidate) => pattern.test(candidate));
          if (line !== undefined) {
            clearInterval(check);
            resolve(line);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearInterval(check);
            reject(new Error(`exited (${child.exitCode ?? child.signalCode}) before ${pattern}`));
          } else if (Date.now() - started > timeoutMs) {
            clearInterval(check);
            reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms`));
          }
        }, 50);
      }),
  };
}

/** Runs a TypeScript entry point the way `npm start` does. */
export function spawnTs(entry: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', entry], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
