import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// infra/serverless/deploy.cjs: the transactional id pool is sized from the reserved concurrency
// of the functions that lease from it (issue 33), so a transactional request inside its
// function's concurrency never finds every id leased; a size set below that is refused.
const require = createRequire(import.meta.url);
const { sizeTxnPool } = require('../../../../infra/serverless/deploy.cjs') as {
  sizeTxnPool: (
    template: Template,
    settings: { reserve: boolean; txnPoolSize: number | undefined },
    functions: Record<string, object>,
  ) => { problem?: string; warning?: string };
};
type Fn = {
  Type: string;
  Properties: {
    ReservedConcurrentExecutions?: number;
    Environment?: { Variables: Record<string, string> };
  };
};
type Template = { Resources: Record<string, Fn>; Metadata?: Record<string, unknown> };

const RESERVED: Record<string, number> = {
  produce: 50,
  produceBatch: 50,
  produceV2: 50,
  publishRecord: 4,
  canary: 2,
  audit: 4,
};
const id = (name: string) => `${name.charAt(0).toUpperCase()}${name.slice(1)}LambdaFunction`;

function packaged(reserve: boolean) {
  const template: Template = { Resources: {} };
  for (const [name, reserved] of Object.entries(RESERVED)) {
    template.Resources[id(name)] = {
      Type: 'AWS::Lambda::Function',
      Properties: {
        ...(reserve && { ReservedConcurrentExecutions: reserved }),
        Environment: { Variables: { TALLY_TXN_ID_PREFIX: 'tally-publish' } },
      },
    };
  }
  const functions = Object.fromEntries(Object.keys(RESERVED).map((name) => [name, {}]));
  return { template, functions };
}
const poolOf = (template: Template) =>
  Object.values(template.Resources).map(
    (fn) => fn.Properties.Environment?.Variables.TALLY_TXN_POOL_SIZE,
  );

describe('sizeTxnPool', () => {
  it('follows the publishing functions’ reserved concurrency and a quarter when unset (the audit’s is not counted)', () => {
    const { template, functions } = packaged(true);
    expect(sizeTxnPool(template, { reserve: true, txnPoolSize: undefined }, functions)).toEqual({});
    expect(new Set(poolOf(template))).toEqual(new Set(['195']));
    expect(template.Metadata?.TallyTxnPoolSize).toBe(195);
  });

  it('keeps a size set at or above it, and refuses one below it naming the figures and what to do', () => {
    const above = packaged(true);
    expect(
      sizeTxnPool(above.template, { reserve: true, txnPoolSize: 200 }, above.functions),
    ).toEqual({});
    expect(new Set(poolOf(above.template))).toEqual(new Set(['200']));

    const below = packaged(true);
    const { problem } = sizeTxnPool(
      below.template,
      { reserve: true, txnPoolSize: 64 },
      below.functions,
    );
    expect(problem).toContain('TALLY_TXN_POOL_SIZE: 64 ids is fewer than the 156 containers');
    expect(problem).toContain(
      'produce 50, produceBatch 50, produceV2 50, publishRecord 4, canary 2',
    );
    expect(problem).toContain('at least 156');
  });

  it('without reserved concurrency keeps the default and warns that nothing bounds it', () => {
    const { template, functions } = packaged(false);
    const { warning, problem } = sizeTxnPool(
      template,
      { reserve: false, txnPoolSize: undefined },
      functions,
    );
    expect(problem).toBeUndefined();
    expect(warning).toContain('TALLY_RESERVED_CONCURRENCY=false');
    expect(new Set(poolOf(template))).toEqual(new Set(['64']));
  });
});
