import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const LOCAL_DIR = fileURLToPath(new URL('.', import.meta.url));
const POM = `${LOCAL_DIR}pom.xml`;
const CACHE_DIR = `${LOCAL_DIR}.cache`;
const LIBS_DIR = `${CACHE_DIR}/kafka-libs`;
const MARKER = `${LIBS_DIR}/.resolved-from`;

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
  const classpath = `${LIBS_DIR}/*`;
  if (existsSync(MARKER) && readFileSync(MARKER, 'utf8') === pomHash) {
    return { classpath, resolveMs: 0 };
  }
  const started = Date.now();
  mkdirSync(CACHE_DIR, { recursive: true });
  // Resolve into a private folder and rename it into place, so concurrent starts never see
  // half a classpath.
  const staging = `${CACHE_DIR}/kafka-libs.${process.pid}.${Date.now()}`;
  try {
    await run(
      process.env.MVN ?? 'mvn',
      [
        '-B',
        '-q',
        '-f',
        POM,
        'dependency:copy-dependencies',
        `-DoutputDirectory=${staging}`,
        '-DincludeScope=runtime',
      ],
      { maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 },
    );
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    const output = error instanceof Error && 'stdout' in error ? String(error.stdout) : '';
    throw new Error(
      `Maven could not resolve the Kafka jars from ${POM} (is mvn on PATH and Maven Central reachable?)\n${output.slice(-4000)}`,
      { cause: error },
    );
  }
  writeFileSync(`${staging}/.resolved-from`, pomHash);
  rmSync(LIBS_DIR, { recursive: true, force: true });
  try {
    renameSync(staging, LIBS_DIR);
  } catch (error) {
    // Another start renamed its copy into place first; ours is the same set of jars.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(MARKER)) throw error;
  }
  return { classpath, resolveMs: Date.now() - started };
}
