import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveKafkaJars } from './kafka-jars.js';
import { ManagedProcess } from './managed-process.js';
import { freeLoopbackPort } from './ports.js';

const CONFIG_DIR = fileURLToPath(new URL('./kafka/', import.meta.url));

export interface KafkaBroker {
  /** `127.0.0.1:<port>` */
  readonly bootstrap: string;
  readonly clusterId: string;
  readonly process: ManagedProcess;
  /** Maven resolve time (0 on a warm cache), storage format time. */
  readonly timings: { readonly resolveMs: number; readonly formatMs: number };
}

function javaCommand(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

function render(template: string, values: Record<string, string>): string {
  return template.replace(/\$\{([A-Z_]+)\}/g, (placeholder, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`server.properties: no value for ${placeholder}`);
    return value;
  });
}

/**
 * Kafka cluster ids are 16 random bytes, base64url without padding. One that starts with "-"
 * would be read as an option by kafka-storage's argument parser, so such draws are skipped.
 */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (/^[A-Za-z0-9]/.test(id)) return id;
  }
}

/**
 * Formats a fresh KRaft log dir under `workDir` and starts a single-node broker (combined
 * broker + controller) on free loopback ports. Resolves once the JVM is running; callers wait
 * for the broker to answer.
 */
export async function startKafkaBroker(workDir: string): Promise<KafkaBroker> {
  const jars = await resolveKafkaJars();
  const [brokerPort, controllerPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const propertiesFile = join(workDir, 'server.properties');
  const template = readFileSync(join(CONFIG_DIR, 'server.properties'), 'utf8');
  writeFileSync(
    propertiesFile,
    render(template, {
      BROKER_PORT: String(brokerPort),
      CONTROLLER_PORT: String(controllerPort),
      LOG_DIR: join(workDir, 'kafka-data'),
    }),
  );
  const jvm = [
    '-cp',
    jars.classpath,
    `-Dlog4j.configuration=file:${join(CONFIG_DIR, 'log4j.properties')}`,
    `-Dkafka.logs.dir=${workDir}`,
    '-Djava.awt.headless=true',
  ];
  const clusterId = newClusterId();
  const logFile = join(workDir, 'kafka.log');

  const formatStarted = Date.now();
  const format = await ManagedProcess.start({
    name: 'kafka storage format',
    command: javaCommand(),
    args: [...jvm, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', propertiesFile],
    logFile,
  });
  const formatExit = await format.exited;
  if (formatExit !== 0) {
    throw new Error(
      `kafka storage format exited with ${formatExit}; see ${logFile}:\n${tail(logFile)}`,
    );
  }
  const formatMs = Date.now() - formatStarted;

  const broker = await ManagedProcess.start({
    name: 'kafka broker',
    command: javaCommand(),
    args: [
      '-Xms256m',
      '-Xmx1g',
      '-XX:+UseG1GC',
      '-XX:MaxGCPauseMillis=20',
      ...jvm,
      'kafka.Kafka',
      propertiesFile,
    ],
    logFile,
  });
  return {
    bootstrap: `127.0.0.1:${brokerPort}`,
    clusterId,
    process: broker,
    timings: { resolveMs: jars.resolveMs, formatMs },
  };
}

export function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
