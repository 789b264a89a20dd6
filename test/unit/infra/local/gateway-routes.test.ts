import { describe, expect, it } from 'vitest';
import { readHttpRoutes, routeRefusal } from '../../../../infra/local/gateway-routes.js';

describe("the local gateway's routes (serverless.yml's httpApi events)", () => {
  const routes = readHttpRoutes();

  it('passes every route serverless.yml declares, with its path parameters filled', () => {
    expect(routes).toContain('POST /v3/clusters/{cluster_id}/topics/{topic_name}/records:batch');
    for (const key of routes) {
      const [method = '', path = ''] = key.split(' ');
      expect(routeRefusal(routes, method, path.replace(/\{[^}]+\}/g, 'x1')), key).toBeUndefined();
    }
  });

  it('answers 405 with every method the path takes, and 404 for a path none takes', () => {
    const wrong = routeRefusal(routes, 'DELETE', '/v3/clusters/c1/audits?x=1');
    expect(wrong).toMatchObject({ status: 405, headers: { allow: 'POST' } });
    expect(JSON.parse(wrong?.body ?? '{}')).toEqual({
      error_code: 405,
      message: '/v3/clusters/c1/audits does not take DELETE; it takes POST',
      retriable: false,
    });
    expect(routeRefusal(routes, 'GET', '/v3/clusters/c1/topics/t1/records')?.status).toBe(405);
    expect(routeRefusal(routes, 'GET', '/v3/clusters/c1/nothing')?.status).toBe(404);
    // One segment per parameter: a slash in a topic name is not a topic.
    expect(routeRefusal(routes, 'POST', '/v3/clusters/c1/topics/a/b/records')?.status).toBe(404);
  });
});
