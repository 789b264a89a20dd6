import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ManagedProcess } from './managed-process.js';
import { freeLoopbackPort } from './ports.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DYNALITE = fileURLToPath(new URL('./dynalite-server.ts', import.meta.url));

export interface DynamoDbServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly process: ManagedProcess;
}

/**
 * Starts an in-memory DynamoDB API (dynalite, an open-source implementation of the DynamoDB
 * wire protocol) on a free loopback port, as a separate process so it can be stopped, paused
 * or killed like the real dependency it stands for. Items are measured as DynamoDB measures
 * them (dynalite-server.ts), so one over 400 KB is refused here as there.
 */
export async function startDynamoDbServer(workDir: string): Promise<DynamoDbServer> {
  const port = await freeLoopbackPort();
  const server = await ManagedProcess.start({
    name: 'dynamodb (dynalite)',
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      DYNALITE,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--createTableMs',
      '0',
      '--deleteTableMs',
      '0',
      '--updateTableMs',
      '0',
    ],
    logFile: join(workDir, 'dynamodb.log'),
    cwd: ROOT,
  });
  return { endpoint: `http://127.0.0.1:${port}`, process: server };
}
