import { execFile } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { javaCommand } from './kafka-broker.js';
import { ManagedProcess } from './managed-process.js';
import { cachedFolder, runMaven } from './maven-cache.js';
import { freeLoopbackPort } from './ports.js';

const run = promisify(execFile);

/**
 * Apicurio Registry, as its release ships it: the "all" tar.gz attached to
 * io.apicurio:apicurio-registry-app (a Quarkus app with its lib/ folder). 3.0.9 runs on Java 17;
 * 3.3.x, the newer releases Maven Central serves, are built for Java 21 (docs/schema-registry.md).
 */
export const APICURIO_VERSION = '3.0.9';
const ARTIFACT = `io.apicurio:apicurio-registry-app:${APICURIO_VERSION}:tar.gz:all`;

export interface SchemaRegistry {
  /** `http://127.0.0.1:<port>`: Apicurio's own API; the Confluent one is `confluentApiUrl`. */
  readonly url: string;
  /** `<url>/apis/ccompat/v7`: what Confluent Schema Registry clients are given. */
  readonly confluentApiUrl: string;
  readonly process: ManagedProcess;
  /** Maven fetch and unpack time (0 on a warm cache). */
  readonly timings: { readonly resolveMs: number };
}

/**
 * Fetches the app with Maven into infra/local/.cache/apicurio-registry-<version> (git-ignored)
 * and returns its runner jar. Plugin 2.8's `get` is named on purpose: later versions read the
 * artifact's POM, whose parent (io.apicurio:apicurio-registry:pom:3.0.9) Maven Central does
 * not serve, and fail; 2.8 fetches the file alone.
 */
export async function resolveSchemaRegistryApp(): Promise<{ jar: string; resolveMs: number }> {
  const app = await cachedFolder(`apicurio-registry-${APICURIO_VERSION}`, ARTIFACT, async (dir) => {
    mkdirSync(dir, { recursive: true });
    const archive = join(dir, 'app.tar.gz');
    await runMaven(
      [
        'org.apache.maven.plugins:maven-dependency-plugin:2.8:get',
        `-Dartifact=${ARTIFACT}`,
        '-Dtransitive=false',
        `-Ddest=${archive}`,
      ],
      `Apicurio Registry (${ARTIFACT})`,
    );
    await run('tar', ['-xzf', archive, '-C', dir]);
    rmSync(archive);
  });
  return {
    jar: join(app.dir, `apicurio-registry-app-${APICURIO_VERSION}-runner.jar`),
    resolveMs: app.fillMs,
  };
}

/**
 * Starts Apicurio Registry on a free loopback port with its default storage, an in-memory H2
 * database: every start is empty. Resolves once the JVM runs; callers wait for it to answer
 * (readiness.ts's waitForSchemaRegistry).
 */
export async function startSchemaRegistry(workDir: string): Promise<SchemaRegistry> {
  const app = await resolveSchemaRegistryApp();
  const port = await freeLoopbackPort();
  const managed = await ManagedProcess.start({
    name: 'schema registry (Apicurio)',
    command: javaCommand(),
    args: [
      '-Xms64m',
      '-Xmx512m',
      // A short-lived test server: C1 alone and the serial collector halve its start on two
      // busy cores, and it never runs long enough to miss C2.
      '-XX:TieredStopAtLevel=1',
      '-XX:+UseSerialGC',
      '-Dquarkus.http.host=127.0.0.1',
      `-Dquarkus.http.port=${port}`,
      '-jar',
      app.jar,
    ],
    logFile: join(workDir, 'schema-registry.log'),
    cwd: workDir,
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    confluentApiUrl: `${url}/apis/ccompat/v7`,
    process: managed,
    timings: { resolveMs: app.resolveMs },
  };
}
