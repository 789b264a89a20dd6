import { afterEach, describe, expect, it, vi } from 'vitest';
import { httpEvent, lambdaContext, testAuthEnv } from '../../helpers/http-event.js';

// How callers are authenticated is read once, when a function's module loads: a bad
// configuration fails the cold start naming the variable, not the first request.
describe('HTTP functions at init', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('fail to load with a bad TALLY_AUTH or TALLY_AUTH_TOKENS, naming it', async () => {
    // Every route module calls httpHandler at its top level: its throw is the module's.
    const define = async () => {
      vi.resetModules();
      const { httpHandler } = await import('../../../functions/platform/http.js');
      return httpHandler('read', async () => ({ statusCode: 200 }));
    };
    vi.stubEnv('TALLY_AUTH', 'open-to-all');
    await expect(define()).rejects.toMatchObject({
      name: 'ConfigurationError',
      field: 'TALLY_AUTH',
    });
    vi.stubEnv('TALLY_AUTH', 'tokens');
    vi.stubEnv('TALLY_AUTH_TOKENS', '{"short": {"caller": "x", "scopes": ["read"]}}');
    await expect(define()).rejects.toMatchObject({ field: 'TALLY_AUTH_TOKENS' });
    for (const [name, value] of Object.entries(testAuthEnv())) vi.stubEnv(name, value);
    await expect(define()).resolves.toBeTypeOf('function');
  });

  it('give the route the authenticated caller, after its scope was checked', async () => {
    for (const [name, value] of Object.entries(testAuthEnv())) vi.stubEnv(name, value);
    vi.resetModules();
    const { httpHandler } = await import('../../../functions/platform/http.js');
    const seen: unknown[] = [];
    const route = httpHandler('publish', async (_event, _context, caller) => {
      seen.push(caller);
      return { statusCode: 200, body: '{}' };
    });
    const ok = await route(httpEvent(), lambdaContext());
    expect(ok.statusCode).toBe(200);
    expect(seen).toMatchObject([{ id: 'test' }]);
    const reader = httpEvent({ headers: { authorization: 'Bearer tally-test-token-reader-0001' } });
    expect((await route(reader, lambdaContext())).statusCode).toBe(403);
    const nobody = httpEvent({ headers: { authorization: 'Bearer not-a-token-of-ours-000' } });
    expect((await route(nobody, lambdaContext())).statusCode).toBe(401);
    expect(seen).toHaveLength(1);
  });
});
