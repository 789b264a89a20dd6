// `npm run deploy:check -- --stage prod [--region eu-west-1]`: a deploy checked offline, with
// the configuration of the environment (docs/deploy.md). Packages as `serverless deploy` would
// (no AWS credentials needed), runs cfn-lint when it is installed, runs Tally's own checks of the
// packaged template (template-checks.ts), and prints what a deploy would create. Exits non-zero
// on a refused configuration, a cfn-lint error or a finding.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { serviceCopy } from './service-copy.js';
import { checkTemplate, resourcesByType, type Template } from './template-checks.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);
const { readSettings } = require('../serverless/deploy-config.cjs') as {
  readSettings: (
    env: NodeJS.ProcessEnv,
    stage: string,
    region: string,
  ) => { production: boolean; protectData: boolean; latencySeconds: number };
};

function option(args: readonly string[], name: string, fallback: string): string {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] ? (args[at + 1] as string) : fallback;
}

/** cfn-lint's findings by level, or undefined when it is not installed. */
async function cfnLint(
  file: string,
): Promise<{ errors: string[]; warnings: string[] } | undefined> {
  try {
    await run('cfn-lint', ['--version']);
  } catch {
    return undefined;
  }
  const { stdout } = await run('cfn-lint', ['--format', 'parseable', file]).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
  );
  const lines = stdout.split('\n').filter(Boolean);
  // path:line:column:endLine:endColumn:RULE:message
  const rule = (line: string) => line.split(':')[5] ?? '';
  return {
    errors: lines.filter((l) => rule(l).startsWith('E')),
    warnings: lines.filter((l) => /^[WI]/.test(rule(l))),
  };
}

async function main(args: readonly string[]): Promise<number> {
  const stage = option(args, 'stage', 'dev');
  const region = option(args, 'region', process.env.AWS_REGION ?? 'eu-west-1');
  // TALLY_DEPLOY_CHECK_OUT keeps the package there (the tests read its template); else a
  // temporary directory, removed after.
  const keep = process.env.TALLY_DEPLOY_CHECK_OUT;
  const out = keep || mkdtempSync(join(tmpdir(), 'tally-deploy-check-'));
  const service = serviceCopy();
  try {
    const cli = join(ROOT, 'node_modules/serverless/bin/serverless.js');
    const packaged = await run(
      process.execPath,
      [cli, 'package', '--stage', stage, '--region', region, '--package', out],
      {
        cwd: service,
        env: {
          SLS_TELEMETRY_DISABLED: '1',
          SLS_NOTIFICATIONS_MODE: 'off',
          ...process.env,
        },
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string; stderr?: string }) => error);
    if ('code' in packaged || !('stdout' in packaged)) {
      process.stderr.write(`${packaged.stdout ?? ''}${packaged.stderr ?? ''}`);
      console.error(`deploy:check: stage ${stage} does not package (above)`);
      return 1;
    }
    const file = join(out, 'cloudformation-template-update-stack.json');
    const template = JSON.parse(readFileSync(file, 'utf8')) as Template;
    let failed = false;

    const lint = await cfnLint(file);
    if (lint === undefined) console.log('cfn-lint: not installed (pip install cfn-lint), skipped');
    else {
      console.log(`cfn-lint: ${lint.errors.length} errors, ${lint.warnings.length} warnings`);
      for (const line of [...lint.errors, ...lint.warnings])
        console.log(`  ${line.replace(`${file}:`, '')}`);
      failed ||= lint.errors.length > 0;
    }

    const settings = readSettings(process.env, stage, region);
    const findings = checkTemplate(template, {
      production: settings.production,
      externallySubscribed: process.env.TALLY_NOTIFY_SUBSCRIBED === 'true',
      protectData: settings.protectData,
      scram: process.env.KAFKA_AUTH?.trim() === 'scram',
      latencySeconds: settings.latencySeconds,
    });
    console.log(`tally checks: ${findings.length} findings`);
    for (const f of findings) console.log(`  [${f.check}] ${f.resource ?? ''}: ${f.message}`);
    failed ||= findings.length > 0;

    const reserved = Object.values(template.Resources).reduce(
      (sum, r) => sum + (Number(r.Properties?.ReservedConcurrentExecutions) || 0),
      0,
    );
    const byType = resourcesByType(template);
    const total = Object.values(byType).reduce((a, b) => a + b, 0);
    console.log(`would create (stage ${stage}, ${region}): ${total} resources`);
    for (const [type, count] of Object.entries(byType))
      console.log(`  ${String(count).padStart(4)}  ${type}`);
    console.log(
      `reserved concurrency: ${reserved} in all (the account's concurrency limit must be at least ${reserved + 100})`,
    );
    console.log(failed ? 'deploy:check: FAILED' : 'deploy:check: OK');
    return failed ? 1 : 0;
  } finally {
    if (!keep) rmSync(out, { recursive: true, force: true });
    rmSync(service, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
