// Kills a child of the local stack when the process that started it dies without cleaning up
// (SIGKILL, crash, OOM), then removes the paths given after the pids (the child's own files the
// parent would have removed). Runs detached: `node watchdog.mjs <parentPid> <childPid> [path…]`.
// Exits by itself as soon as the child is gone.
import { readFileSync, rmSync } from 'node:fs';

const [parentPid, childPid] = process.argv.slice(2, 4).map(Number);
const orphanedPaths = process.argv.slice(4);
const removeOrphaned = () => {
  for (const path of orphanedPaths) rmSync(path, { recursive: true, force: true });
};
const POLL_MS = 250;
const GRACE_MS = 5000;

function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A parent that died but was not reaped yet still answers kill(0): read its state.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // no procfs: kill(0) is all we have
  }
}

function signal(pid, name) {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

if (!Number.isInteger(parentPid) || !Number.isInteger(childPid)) {
  process.exit(2);
}

const timer = setInterval(() => {
  if (!isAlive(childPid)) {
    process.exit(0);
  }
  if (!isAlive(parentPid)) {
    clearInterval(timer);
    signal(childPid, 'SIGTERM');
    const deadline = Date.now() + GRACE_MS;
    const reaper = setInterval(() => {
      if (!isAlive(childPid)) {
        removeOrphaned();
        process.exit(0);
      }
      if (Date.now() > deadline) {
        signal(childPid, 'SIGKILL');
        clearInterval(reaper);
        setTimeout(() => {
          removeOrphaned();
          process.exit(0);
        }, POLL_MS);
      }
    }, POLL_MS);
  }
}, POLL_MS);
