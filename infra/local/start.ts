// `npm start`: runs the local stack in the foreground until SIGINT or SIGTERM.
import { startLocalStack } from './stack.js';

const log = (line: string) => process.stderr.write(`[tally] ${line}\n`);

let stack: Awaited<ReturnType<typeof startLocalStack>>;
try {
  stack = await startLocalStack({ log, api: true });
} catch (error) {
  log(`could not start the local stack: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}

let stopping = false;
async function shutdown(reason: string, exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  log(`${reason}: stopping`);
  await stack.stop();
  log('stopped');
  process.exit(exitCode);
}

process.once('SIGINT', () => void shutdown('SIGINT', 0));
process.once('SIGTERM', () => void shutdown('SIGTERM', 0));
stack.unexpectedExit.catch((error: unknown) => {
  log(error instanceof Error ? error.message : String(error));
  void shutdown('a service of the stack exited', 1);
});

for (const [logicalId, name] of Object.entries(stack.tables)) log(`table ${logicalId}: ${name}`);
process.stdout.write(`${stack.readyLine()}\n`);
// Stay in the foreground even when every service came from the environment, and stop when
// the process that started us (npm, a shell, a test) is gone: nobody is left to stop us.
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid) void shutdown('parent process exited', 0);
}, 500);
