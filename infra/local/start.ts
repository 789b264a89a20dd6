// `npm start`: runs the local stack in the foreground until SIGINT or SIGTERM.
// `npm start -- --schema-registry` (or TALLY_SCHEMA_REGISTRY=1) also runs a schema registry;
// `npm start -- --glue-schema-registry` (or TALLY_SCHEMA_REGISTRY=glue) serves the Glue stand-in.
import { startLocalStack } from './stack.js';

const log = (line: string) => process.stderr.write(`[tally] ${line}\n`);
const known = new Set(['--schema-registry', '--glue-schema-registry']);
const unknown = process.argv.slice(2).filter((arg) => !known.has(arg));
if (unknown.length > 0) {
  log(`unknown argument(s) ${unknown.join(' ')}; known: ${[...known].join(' ')}`);
  process.exit(2);
}

let stack: Awaited<ReturnType<typeof startLocalStack>>;
try {
  stack = await startLocalStack({
    log,
    api: true,
    schemaRegistry: process.argv.includes('--schema-registry'),
    glueSchemaRegistry: process.argv.includes('--glue-schema-registry'),
  });
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

// `on`, not `once`: `npm start` forwards the signal a process-group kill already delivered, so
// a second one arrives while the first is stopping the stack. With no listener left, Node would
// die at once and leave the stack's tally-stack-* folder behind; here a repeat is ignored.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) log(`${signal} again: still stopping`);
    void shutdown(signal, 0);
  });
}
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
