import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ManagedProcess } from './managed-process.js';
import { freeLoopbackPort } from './ports.js';

const require = createRequire(import.meta.url);

export interface DynamoDbServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly process: ManagedProcess;
}

/**
 * Starts an in-memory DynamoDB API (dynalite, an open-source implementation of the DynamoDB
 * wire protocol) on a free loopback port, as a separate process so it can be stopped, paused
 * or killed like the real dependency it stands for.
 */
export async function startDynamoDbServer(workDir: string): Promise<DynamoDbServer> {
  const port = await freeLoopbackPort();
  const server = await ManagedProcess.start({
    name: 'dynamodb (dynalite)',
    command: process.execPath,
    args: [
      require.resolve('dynalite/cli.js'),
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
  });
  return { endpoint: `http://127.0.0.1:${port}`, process: server };
}
