import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTableDefinitions } from '../../infra/local/table-definitions.js';
import { readZip } from '../helpers/zip.js';

const run = promisify(execFile);

/** The environment of a machine with no AWS credentials and no network to AWS. */
function offlineEnv(home: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^AWS_(ACCESS|SECRET|SESSION|PROFILE)/.test(name),
    ),
  );
  return {
    ...env,
    HOME: home,
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'),
    AWS_CONFIG_FILE: join(home, 'no-config'),
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    CI: 'true',
  };
}

interface Template {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
}

describe('serverless package (offline, no AWS credentials)', () => {
  const work = mkdtempSync(join(tmpdir(), 'tally-sls-'));
  const artifacts = join(work, 'package');
  let template: Template;

  beforeAll(async () => {
    await run(
      process.execPath,
      [
        'node_modules/serverless/bin/serverless.js',
        'package',
        '--stage',
        'test',
        '--package',
        artifacts,
      ],
      { env: offlineEnv(work), timeout: 110_000, maxBuffer: 16 * 1024 * 1024 },
    );
    template = JSON.parse(
      readFileSync(join(artifacts, 'cloudformation-template-update-stack.json'), 'utf8'),
    );
  }, 120_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('declares the health function on nodejs22.x behind GET /health', () => {
    const fn = template.Resources.HealthLambdaFunction;
    expect(fn?.Type).toBe('AWS::Lambda::Function');
    expect(fn?.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Handler: 'functions/health/handler.handler',
    });
    expect(template.Resources.HttpApiRouteGetHealth?.Properties.RouteKey).toBe('GET /health');
  });

  it('declares every table of infra/resources/tables.yml with its key schema', () => {
    for (const table of loadTableDefinitions()) {
      const resource = template.Resources[table.logicalId];
      expect(resource?.Type).toBe('AWS::DynamoDB::Table');
      expect(resource?.Properties.KeySchema).toEqual(table.keySchema);
      expect(resource?.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    }
  });

  it('bundles each function with esbuild into a self-contained ES module that runs', async () => {
    const entries = readZip(readFileSync(join(artifacts, 'health.zip')));
    const bundle = entries.get('functions/health/handler.mjs');
    expect(bundle).toBeDefined();
    expect([...entries.keys()].some((name) => name.includes('node_modules/'))).toBe(false);
    // Run it in a plain Node process, with nothing but the bundle on disk.
    const file = join(work, 'handler.mjs');
    writeFileSync(file, bundle as Buffer);
    const { stdout } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      `const { handler } = await import(${JSON.stringify(pathToFileURL(file).href)});
       process.stdout.write(JSON.stringify(await handler({}, {})));`,
    ]);
    expect(JSON.parse(stdout)).toMatchObject({ statusCode: 200 });
  });
});
