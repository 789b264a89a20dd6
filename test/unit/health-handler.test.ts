import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler } from '../../functions/health/handler.js';

describe('health handler', () => {
  it('answers 200 with a JSON status', async () => {
    const response = await handler({}, {} as Context);
    expect(response).toMatchObject({ statusCode: 200 });
    expect(JSON.parse((response as { body: string }).body)).toEqual({
      status: 'ok',
      service: 'kafka-tally',
    });
  });
});
