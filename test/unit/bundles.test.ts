import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as errors from '../../functions/core/shared/errors.js';

// Every function's bundle, built with serverless.yml's own esbuild settings (as serverless-esbuild
// builds it, without writing it): small enough to load fast, and holding only what its function
// uses. Cold start is paid in what a bundle loads, so this is where it is kept down.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const serverless = parse(readFileSync(`${ROOT}serverless.yml`, 'utf8')) as {
  functions: Record<string, { handler: string }>;
  custom: { esbuild: Record<string, unknown> & { exclude: string[] } };
};
const {
  exclude,
  outputFileExtension: _ext,
  outputWorkFolder: _work,
  ...esbuildOptions
} = serverless.custom.esbuild;

// 400 KB until issue 31 (the sharded ledger, VOID ranges, paged answers and the answer bound
// added ~15 KB to the publish and audit functions); 420 KB until issue 32 bundled the AWS SDK
// (tree-shaken from its ES modules: +240 KB for the DynamoDB document client and its signer,
// credential chain and HTTP handler, which load in ~35 ms against ~70 ms as the runtime's
// CommonJS copy; bench/cold-start.ts measures both in one run, docs/performance.md). The cap
// is what cold start is measured against: 650 KB (produce 641 KB, audit-now 648 KB).
const MAX_BUNDLE_BYTES = 680 * 1024;
/**
 * Credential providers the DynamoDB client's chain holds but a Lambda function does not reach
 * at cold start (Lambda's credentials are in the environment): each is a chunk of its own,
 * loaded by the chain only when the environment has none.
 */
const LAZY_CREDENTIAL_PROVIDERS = [
  '@aws-sdk/credential-provider-ini',
  '@aws-sdk/credential-provider-sso',
  '@aws-sdk/credential-provider-process',
  '@aws-sdk/credential-provider-web-identity',
  '@aws-sdk/credential-provider-http',
  '@smithy/credential-provider-imds',
  '@aws-sdk/nested-clients',
];
/**
 * The one package a bundle leaves out: Powertools' Tracer, which comes from the
 * Powertools layer serverless.yml attaches only with TALLY_TRACING=true, imported at init only
 * then (functions/platform/tracing.ts).
 */
const FROM_LAYER = '@aws-lambda-powertools/tracer';
/** Functions that never talk to Kafka: their bundles must not carry kafkajs. */
const WITHOUT_KAFKA = ['downstreamExample', 'verifyPublished', 'openapi', 'reconcileFanOutMerge'];

const functions = Object.entries(serverless.functions).map(([name, fn]) => ({
  name,
  module: fn.handler.slice(0, fn.handler.lastIndexOf('.')),
}));

describe("each function's esbuild bundle", () => {
  let outputs: Metafile['outputs'];

  beforeAll(async () => {
    // One build per handler file, into its folder, as serverless-esbuild builds them: with
    // splitting, a build's chunks are its own (a build of all entries at once would share
    // chunks between functions, which no function's zip does).
    const modules = [...new Set(functions.map((f) => f.module))];
    const results = await Promise.all(
      modules.map((module) =>
        build({
          ...esbuildOptions,
          absWorkingDir: ROOT,
          entryPoints: [`${module}.ts`],
          outdir: join('out', dirname(module)),
          external: exclude,
          write: false,
          sourcemap: false,
          metafile: true,
          logLevel: 'silent',
        }),
      ),
    );
    outputs = Object.assign({}, ...results.map((r) => r.metafile.outputs));
    // ~20 builds, each with the AWS SDK: ~15 s on 2 idle cores, a minute or more when loaded.
  }, 300_000);

  const outputOf = (module: string) => {
    const output = outputs[`out/${module}.js`];
    expect(output, module).toBeDefined();
    return output as Metafile['outputs'][string];
  };
  /**
   * The outputs a function loads when its bundle loads: its entry and the chunks it imports
   * statically (splitting: true), transitively. A chunk reached only by a dynamic import() is
   * loaded when that import runs, not at cold start; `dynamic` adds those too.
   */
  const loadedBy = (module: string, dynamic = false) => {
    const seen = new Set<string>([`out/${module}.js`]);
    const queue = [`out/${module}.js`];
    for (let path = queue.pop(); path !== undefined; path = queue.pop()) {
      outputOf(path.slice(4, -3));
      for (const i of outputs[path]?.imports ?? []) {
        const wanted = i.kind === 'import-statement' || (dynamic && i.kind === 'dynamic-import');
        if (!i.external && wanted && !seen.has(i.path)) {
          seen.add(i.path);
          queue.push(i.path);
        }
      }
    }
    return [...seen].map((path) => outputs[path] as Metafile['outputs'][string]);
  };
  const coldStartBytes = (module: string) =>
    loadedBy(module).reduce((sum, output) => sum + output.bytes, 0);
  const packagesOf = (module: string, dynamic = false) =>
    new Set(
      loadedBy(module, dynamic).flatMap((output) =>
        Object.keys(output.inputs).flatMap(
          (input) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? [],
        ),
      ),
    );
  const externalImports = (module: string, dynamic = false) =>
    loadedBy(module, dynamic).flatMap((output) => output.imports.filter((i) => i.external));

  it('is minified and keeps names (Step Functions matches errors by name)', () => {
    expect(serverless.custom.esbuild).toMatchObject({ minify: true, keepNames: true });
  });

  it('keeps every error class name through minification (Step Functions matches on it)', async () => {
    const names = Object.keys(errors).filter((name) => name.endsWith('Error'));
    const result = await build({
      ...esbuildOptions,
      absWorkingDir: ROOT,
      splitting: false,
      stdin: {
        contents: `import * as e from './functions/core/shared/errors.ts';
          export const names = ${JSON.stringify(names)}.map((n) => new e[n]('m').name);`,
        resolveDir: ROOT,
        loader: 'ts',
      },
      external: exclude,
      write: false,
      sourcemap: false,
      logLevel: 'silent',
    });
    mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'tally-names-'));
    try {
      const file = join(dir, 'errors.mjs');
      writeFileSync(file, result.outputFiles[0]?.text ?? '');
      const bundled = (await import(pathToFileURL(file).href)) as { names: string[] };
      expect(names.length).toBeGreaterThan(10);
      expect(bundled.names).toEqual(names);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`loads at most ${MAX_BUNDLE_BYTES / 1024} KB at cold start (entry and static chunks)`, () => {
    for (const { name, module } of functions) {
      expect(coldStartBytes(module), name).toBeLessThanOrEqual(MAX_BUNDLE_BYTES);
    }
  });

  it("keeps the schema registry's codecs out of the produce functions' cold start", () => {
    // avsc, protobufjs and ajv (~400 KB) are in a chunk of their own, which the first record
    // with a schema imports (publishing/schema-encoder.ts): reachable, but not loaded at cold start.
    const codecs = ['avsc', 'protobufjs', 'ajv'];
    for (const module of ['functions/publish/produce-handler', 'functions/publish/batch-handler']) {
      const eager = packagesOf(module);
      const reachable = packagesOf(module, true);
      for (const codec of codecs) {
        expect(eager.has(codec), `${module} ${codec}`).toBe(false);
        expect(reachable.has(codec), `${module} ${codec}`).toBe(true);
      }
    }
  });

  it('bundles the AWS SDK from its ES modules (tree-shaken), leaving none of it to the runtime', () => {
    expect(serverless.custom.esbuild.mainFields).toEqual(['module', 'main']);
    for (const { name, module } of functions) {
      const sdk = externalImports(module, true).filter((i) => i.path.startsWith('@aws-sdk/'));
      expect(sdk, name).toEqual([]);
      // The CommonJS build of a client is one file holding every command: not tree-shaken.
      const inputs = loadedBy(module, true).flatMap((output) => Object.keys(output.inputs));
      const sdkInputs = inputs.filter((input) => /node_modules\/@(aws-sdk|smithy)\//.test(input));
      expect(
        sdkInputs.filter((input) => input.includes('/dist-cjs/')),
        name,
      ).toEqual([]);
    }
  });

  it("leaves out only the Tracer, imported dynamically (the layer's)", () => {
    expect(exclude).toEqual([FROM_LAYER]);
    const builtin = (path: string) => path.startsWith('node:') || builtinModules.includes(path);
    for (const { name, module } of functions) {
      const others = outputOf(module)
        .imports.filter((i) => i.external && !builtin(i.path))
        .map((i) => `${i.path} (${i.kind})`);
      // Every function's stack holds the tracing seam: one import, only ever awaited at init
      // when tracing is on; never loaded with the bundle.
      expect(others, name).toEqual([`${FROM_LAYER} (dynamic-import)`]);
      const packages = packagesOf(module);
      expect(packages.has(FROM_LAYER), name).toBe(false);
      expect(packages.has('aws-xray-sdk-core'), name).toBe(false);
    }
  });

  it('holds kafkajs only in functions that talk to Kafka', () => {
    for (const { name, module } of functions) {
      expect(packagesOf(module).has('kafkajs'), name).toBe(!WITHOUT_KAFKA.includes(name));
    }
  });

  it('loads no AWS SDK client at cold start that the function may not use', () => {
    // What a bundle loads at cold start: MSK's control plane (only with MSK_CLUSTER_ARN), Step
    // Functions (only a decision), EventBridge (only an event), Glue (only with a schema), the
    // secret stores (only with SCRAM) and the credential chain's other providers (Lambda's
    // credentials are in the environment) are chunks, imported where they are used.
    for (const { name, module } of functions) {
      const eager = packagesOf(module);
      for (const lazy of [
        '@aws-sdk/client-kafka',
        '@aws-sdk/client-sfn',
        '@aws-sdk/client-eventbridge',
        '@aws-sdk/client-glue',
        '@aws-sdk/client-secrets-manager',
        '@aws-sdk/client-ssm',
        ...LAZY_CREDENTIAL_PROVIDERS,
      ]) {
        expect(eager.has(lazy), `${name} ${lazy}`).toBe(false);
      }
    }
  });

  it("reaches the credential chain's providers only through chunks of their own", () => {
    // The chain is in every DynamoDB function's bundle, its providers loaded when it runs them.
    const reachable = packagesOf('functions/publish/produce-handler', true);
    for (const provider of LAZY_CREDENTIAL_PROVIDERS) {
      expect(reachable.has(provider), provider).toBe(true);
    }
  });
});
