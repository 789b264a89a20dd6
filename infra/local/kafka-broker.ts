import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveKafkaJars } from './kafka-jars.js';
import { ManagedProcess } from './managed-process.js';
import { freeLoopbackPort } from './ports.js';

const CONFIG_DIR = fileURLToPath(new URL('./kafka/', import.meta.url));

export interface KafkaBroker {
  /** `127.0.0.1:<port>`: the PLAINTEXT listener (no authentication). */
  readonly bootstrap: string;
  /** `127.0.0.1:<port>`: the SASL_PLAINTEXT (SCRAM-SHA-512) listener, when users were asked for. */
  readonly saslBootstrap: string | undefined;
  readonly clusterId: string;
  /** The running broker; a new process after `restart()`. */
  readonly process: ManagedProcess;
  /** Maven resolve time (0 on a warm cache), storage format time. */
  readonly timings: { readonly resolveMs: number; readonly formatMs: number };
  /**
   * Kills the broker at once (SIGKILL: no clean shutdown, like a crashed host), then starts it
   * again on the same log dir and ports. Resolves once the new JVM runs; callers wait for it to
   * answer.
   */
  restart(): Promise<void>;
}

export interface KafkaBrokerOptions {
  /**
   * SCRAM-SHA-512 users, created when the log dir is formatted. With any, the broker also
   * listens with SASL_PLAINTEXT and authorizes with ACLs (StandardAuthorizer): a resource with
   * no ACL is open to everyone, and the PLAINTEXT listener's ANONYMOUS principal is a super
   * user, so tests can administer ACLs through `bootstrap`.
   */
  readonly scramUsers?: ReadonlyArray<{ readonly name: string; readonly password: string }>;
}

/** `$JAVA_HOME/bin/java`, else `java` from PATH. */
export function javaCommand(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

/** A `spawn java ENOENT` says what to do: install Java 17, or use a cluster of one's own. */
async function withJavaHint<T>(started: Promise<T>): Promise<T> {
  try {
    return await started;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    if (cause?.code !== 'ENOENT') throw error;
    throw new Error(
      `no java at ${javaCommand()} (JAVA_HOME or PATH): the local Kafka broker needs Java 17. Install it (on Debian: apt-get install openjdk-17-jre-headless) and put java on PATH or set JAVA_HOME, or point KAFKA_BROKERS at a running Kafka cluster`,
      { cause: error },
    );
  }
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
export async function startKafkaBroker(
  workDir: string,
  options: KafkaBrokerOptions = {},
): Promise<KafkaBroker> {
  const jars = await resolveKafkaJars();
  const [brokerPort, controllerPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const users = options.scramUsers ?? [];
  const saslPort = users.length > 0 ? await freeLoopbackPort() : undefined;
  const propertiesFile = join(workDir, 'server.properties');
  const template = readFileSync(join(CONFIG_DIR, 'server.properties'), 'utf8');
  const properties = render(template, {
    BROKER_PORT: String(brokerPort),
    CONTROLLER_PORT: String(controllerPort),
    LOG_DIR: join(workDir, 'kafka-data'),
    SASL_LISTENER: saslPort === undefined ? '' : `,SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
    SASL_PROTOCOL: saslPort === undefined ? '' : ',SASL_PLAINTEXT:SASL_PLAINTEXT',
  });
  const scram =
    saslPort === undefined ? '' : readFileSync(join(CONFIG_DIR, 'scram.properties'), 'utf8');
  writeFileSync(propertiesFile, `${properties}${scram}`);
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
  const format = await withJavaHint(
    ManagedProcess.start({
      name: 'kafka storage format',
      command: javaCommand(),
      args: [
        ...jvm,
        'kafka.tools.StorageTool',
        'format',
        '-t',
        clusterId,
        '-c',
        propertiesFile,
        ...users.flatMap((user) => ['--add-scram', scramEntry(user)]),
      ],
      logFile,
    }),
  );
  const formatExit = await format.exited;
  if (formatExit !== 0) {
    throw new Error(
      `kafka storage format exited with ${formatExit}; see ${logFile}:\n${tail(logFile)}`,
    );
  }
  const formatMs = Date.now() - formatStarted;

  const brokerArgs = [
    '-Xms256m',
    '-Xmx1g',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    ...jvm,
    'kafka.Kafka',
    propertiesFile,
  ];
  const launch = () =>
    ManagedProcess.start({
      name: 'kafka broker',
      command: javaCommand(),
      args: brokerArgs,
      logFile,
    });
  let running = await launch();
  return {
    bootstrap: `127.0.0.1:${brokerPort}`,
    saslBootstrap: saslPort === undefined ? undefined : `127.0.0.1:${saslPort}`,
    clusterId,
    get process() {
      return running;
    },
    timings: { resolveMs: jars.resolveMs, formatMs },
    async restart() {
      running.killNow();
      await running.exited;
      running = await launch();
    },
  };
}

/** StorageTool's `--add-scram` value; names and passwords must not need quoting. */
function scramEntry(user: { readonly name: string; readonly password: string }): string {
  for (const value of [user.name, user.password]) {
    if (!/^[A-Za-z0-9._-]+$/.test(value)) {
      throw new Error(`SCRAM user names and passwords here are [A-Za-z0-9._-]+, got "${value}"`);
    }
  }
  return `SCRAM-SHA-512=[name=${user.name},password=${user.password}]`;
}

export function tail(file: string, lines = 30): string {
  try {
    const all = readFileSync(file, 'utf8').split('\n');
    const last = all.slice(-lines);
    // A broker that stops by itself logs why (an ERROR or FATAL line, a bind failure) long before
    // the shutdown lines a tail shows: the first few such lines come first.
    const why = all
      .slice(0, -lines)
      .filter((line) => / (ERROR|FATAL) |Exception/.test(line))
      .slice(0, 5);
    return [...(why.length > 0 ? [...why, '…'] : []), ...last].join('\n');
  } catch {
    return '(no log)';
  }
}
