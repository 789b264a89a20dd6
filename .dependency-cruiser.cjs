// The layering rules of docs/architecture.md, checked by `npm run lint` (dependency-cruiser).
// A rule here replaces a rule a reviewer would have to remember: break one and lint fails,
// naming the two files.
/**
 * Function folders: one Lambda entry point (or a family of them) each, never importing another.
 * What several of them share sits beside them with no handler: consumer/ (the consumer-side
 * middlewares), publishing/ and reconciling/ (the use cases and runtimes two functions share),
 * openapi/, platform/, adapters/ and core/.
 */
const FUNCTION_FOLDERS = [
  'audit',
  'canary',
  'downstream-example',
  'publish',
  'receipts',
  'reconcile',
  'workflows',
];
const fnFolder = `^functions/(${FUNCTION_FOLDERS.join('|')})/`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import circle hides which file is the entry point. A helper imports the types it needs ' +
        "from its domain's ports.ts (or the file that defines them), never from its orchestrator.",
      from: { path: '^(functions|infra)/' },
      to: { circular: true },
    },
    {
      name: 'core-is-pure',
      severity: 'error',
      comment:
        'functions/core is the pure domain: no adapters, platform, function folders, SDKs, ' +
        'kafkajs, middy, Powertools or aws-lambda types. Give it a port instead.',
      from: { path: '^functions/core/' },
      to: {
        path: [
          '^functions/(adapters|platform|openapi)/',
          fnFolder,
          'node_modules/(@aws-sdk|@smithy|kafkajs|@middy|@aws-lambda-powertools|@types/aws-lambda|aws-lambda)(/|$)',
          // A types-only package resolves to no file: matched by its name.
          '^aws-lambda$',
        ],
      },
    },
    {
      name: 'core-imports-no-node-io',
      severity: 'error',
      comment: 'functions/core does no I/O: files, sockets, processes and timers come in as ports.',
      from: { path: '^functions/core/' },
      to: {
        dependencyTypes: ['core'],
        path: '^(node:)?(fs|fs/promises|net|http|https|child_process|dgram|dns|tls|cluster|worker_threads)$',
      },
    },
    {
      name: 'adapters-import-no-platform',
      severity: 'error',
      comment:
        'An adapter gets its log and client wiring injected (adapters/kafka/record-sender.ts is ' +
        'the model); platform composes adapters, not the other way round.',
      from: { path: '^functions/adapters/' },
      to: { path: ['^functions/platform/', '^functions/openapi/', fnFolder] },
    },
    {
      name: 'platform-imports-no-function',
      severity: 'error',
      comment: 'platform is shared by every function: it never reaches into one of them.',
      from: { path: '^functions/(platform|openapi)/' },
      to: { path: fnFolder },
    },
    {
      name: 'function-imports-no-other-function',
      severity: 'error',
      comment:
        "A function folder imports no other function's folder: what two functions share lives " +
        'in core, adapters or platform.',
      from: { path: fnFolder },
      to: { path: fnFolder, pathNot: '^functions/$1/' },
    },
    {
      name: 'functions-import-no-tests-or-infra',
      severity: 'error',
      comment: 'What is deployed never imports the tests, the benchmarks or the local stack.',
      from: { path: '^functions/' },
      to: { path: '^(test|bench|infra)/' },
    },
    {
      name: 'packages-ship-no-platform',
      severity: 'error',
      comment:
        'packages/ are installed by other teams: they bundle the shared consumer code, core and ' +
        "adapters, and nothing they import reaches the Lambda runtime's platform (config, " +
        'logger, middy stacks), a function folder, the tests or the local stack. A setting or a ' +
        'logger the package needs is an option.',
      from: { path: '^packages/' },
      // Reachable: what the package's modules import, and what those import, down the tree.
      to: {
        path: ['^functions/(platform|openapi)/', fnFolder, '^(test|bench|infra)/'],
        reachable: true,
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.cjs', '.mjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
