// Stand-in HTTP function until publish, reconcile and audit land: proves the bundling,
// packaging and routing path end to end.
import middy from '@middy/core';
import type { APIGatewayProxyResultV2 } from 'aws-lambda';

export const handler = middy().handler(
  async (): Promise<APIGatewayProxyResultV2> => ({
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'ok', service: 'kafka-tally' }),
  }),
);
