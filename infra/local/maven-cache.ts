import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** infra/local/.cache: git-ignored; what Maven resolved for the local stack. */
export const CACHE_DIR = fileURLToPath(new URL('./.cache', import.meta.url));

export interface CachedFolder {
  readonly dir: string;
  /** How long filling it took, or 0 when the cache already held it. */
  readonly fillMs: number;
}

/**
 * `CACHE_DIR/<name>`, filled by `fill` unless it was already filled for the same `key`. It is
 * filled in a private folder and renamed into place, so concurrent starts never see half of
 * it, and a warm start runs nothing.
 */
export async function cachedFolder(
  name: string,
  key: string,
  fill: (staging: string) => Promise<void>,
): Promise<CachedFolder> {
  const dir = `${CACHE_DIR}/${name}`;
  const marker = `${dir}/.resolved-from`;
  if (existsSync(marker) && readFileSync(marker, 'utf8') === key) return { dir, fillMs: 0 };
  const started = Date.now();
  mkdirSync(CACHE_DIR, { recursive: true });
  const staging = `${dir}.${process.pid}.${Date.now()}`;
  try {
    await fill(staging);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  writeFileSync(`${staging}/.resolved-from`, key);
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(staging, dir);
  } catch (error) {
    // Another start renamed its copy into place first; ours is the same content.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(marker)) throw error;
  }
  return { dir, fillMs: Date.now() - started };
}

/** Runs Maven (`MVN` or `mvn`); a failure names `what` and ends with Maven's last output. */
export async function runMaven(args: readonly string[], what: string): Promise<void> {
  try {
    await run(process.env.MVN ?? 'mvn', ['-B', '-q', ...args], {
      maxBuffer: 16 * 1024 * 1024,
      timeout: 15 * 60_000,
    });
  } catch (error) {
    const output = error instanceof Error && 'stdout' in error ? String(error.stdout) : '';
    throw new Error(
      `Maven could not resolve ${what} (is mvn on PATH and Maven Central reachable?)\n${output.slice(-4000)}`,
      { cause: error },
    );
  }
}
