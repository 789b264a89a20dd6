import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cachedFolder, runMaven } from './maven-cache.js';

const POM = fileURLToPath(new URL('./pom.xml', import.meta.url));

export interface ResolvedJars {
  /** A java `-cp` value. */
  readonly classpath: string;
  /** How long Maven took, or 0 when the git-ignored cache already had the jars. */
  readonly resolveMs: number;
}

/**
 * Resolves the Kafka broker jars named by infra/local/pom.xml with Maven into
 * infra/local/.cache/kafka-libs. Maven's own repository caches downloads; the folder is
 * reused as long as the pom is unchanged, so a warm start does not run Maven at all.
 */
export async function resolveKafkaJars(): Promise<ResolvedJars> {
  const pomHash = createHash('sha256').update(readFileSync(POM)).digest('hex');
  const libs = await cachedFolder('kafka-libs', pomHash, (staging) =>
    runMaven(
      [
        '-f',
        POM,
        'dependency:copy-dependencies',
        `-DoutputDirectory=${staging}`,
        '-DincludeScope=runtime',
      ],
      `the Kafka jars from ${POM}`,
    ),
  );
  return { classpath: `${libs.dir}/*`, resolveMs: libs.fillMs };
}
