import { cpSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A copy of what packaging reads (serverless.yml, its plugins, resources and state machines, the
 * functions), with the checkout's node_modules: serverless writes its state and template into
 * the service's own .serverless/ whatever --package says, so two packages of one checkout at
 * once (a test beside another, a check beside a deploy) would mix their templates. And
 * serverless-esbuild removes the service's .esbuild/ after packaging: in the checkout, that is
 * where `npm start` (serverless-offline) serves its handlers from, so a package of the checkout
 * takes the handlers away from a stack that is running.
 */
export function serviceCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-deploy-service-'));
  for (const path of [
    'serverless.yml',
    'package.json',
    'tsconfig.json',
    'functions',
    'infra/serverless',
    'infra/resources',
    'infra/state-machines',
  ])
    cpSync(join(ROOT, path), join(dir, path), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}
