import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createKeyedPublishes } from '../../../../functions/adapters/dynamodb/reservations.js';
import type { KeyedPublish } from '../../../../functions/core/publish/ports.js';
import { Deadline } from '../../../../functions/core/shared/deadline.js';

// A claim refused because the key has an item: DynamoDB sends that item with the refusal
// (ALL_OLD), so the claim needs no read; dynalite does not, so the adapter reads it then.

const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const dynamo = mockClient(documents);
const keyed = createKeyedPublishes(documents, 'keys', 3600);
const soon = () => new Deadline(Date.now() + 5000);

const mine: KeyedPublish = {
  idempotencyKey: 'k',
  fingerprint: 'f-mine',
  stream: 's',
  topic: 't',
  firstSeq: 9,
  count: 1,
  timestamp: 1,
  lockedUntil: Date.now() + 1000,
};
const stored = { ...mine, fingerprint: 'f-first', firstSeq: 3, lockedUntil: 0, answer: '[3]' };
const refused = (item?: Record<string, unknown>) =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    ...(item && { Item: marshall(item) }),
  });

describe('createKeyedPublishes: claim', () => {
  beforeEach(() => dynamo.reset());

  it('stores the item under a condition that returns the one already there', async () => {
    dynamo.on(PutCommand).resolves({});
    expect(await keyed.claim(mine, soon())).toEqual(mine);
    expect(dynamo.commandCalls(PutCommand)[0]?.args[0].input).toMatchObject({
      ConditionExpression: 'attribute_not_exists(idempotencyKey)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('answers a refusal with the item DynamoDB sent along: no read', async () => {
    dynamo.on(PutCommand).rejects(refused(stored));
    expect(await keyed.claim(mine, soon())).toMatchObject({
      fingerprint: 'f-first',
      firstSeq: 3,
      answer: [3],
    });
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('reads the item when the refusal comes without it (dynalite)', async () => {
    dynamo.on(PutCommand).rejects(refused());
    dynamo.on(GetCommand).resolves({ Item: stored });
    expect(await keyed.claim(mine, soon())).toMatchObject({ firstSeq: 3, answer: [3] });
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(1);
  });
});
