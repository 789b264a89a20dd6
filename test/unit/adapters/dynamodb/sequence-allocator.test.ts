import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSequenceAllocator } from '../../../../functions/adapters/dynamodb/sequence-allocator.js';
import { Deadline } from '../../../../functions/core/shared/deadline.js';

// The allocator's own retries under one allocation name, against a mocked DynamoDB: a lost
// answer is not a second block of seqs.

const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const dynamo = mockClient(documents);
const allocator = createSequenceAllocator(documents, 'streams');
const soon = () => new Deadline(Date.now() + 5000);

const noAnswer = () => Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
/** What DynamoDB answers a retry whose earlier attempt was applied and is still the latest. */
const alreadyApplied = (allocation: string, lastSeq: number) =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    Item: { allocation: { S: allocation }, lastSeq: { N: String(lastSeq) } },
  });

/** The allocation id the n-th UpdateItem carried. */
const idOf = (n: number) =>
  dynamo.commandCalls(UpdateCommand)[n]?.args[0].input.ExpressionAttributeValues?.[':id'];

describe('createSequenceAllocator', () => {
  beforeEach(() => dynamo.reset());

  it('allocates in one conditional update naming the allocation', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { lastSeq: 12, homeTopic: 'first' } });
    const before = Date.now();
    const allocation = await allocator.allocate('s', 3, 't', soon());
    expect(allocation).toMatchObject({ firstSeq: 10, homeTopic: 'first' });
    expect(allocation.allocatedAt).toBeGreaterThanOrEqual(before);
    const [call] = dynamo.commandCalls(UpdateCommand);
    expect(call?.args[0].input).toMatchObject({
      ConditionExpression: 'attribute_not_exists(allocation) OR allocation <> :id',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      // The stream's home topic is the first allocation's, never changed after.
      UpdateExpression: expect.stringContaining('homeTopic = if_not_exists(homeTopic, :topic)'),
      ExpressionAttributeValues: expect.objectContaining({ ':topic': 't' }),
    });
    expect(dynamo.calls()).toHaveLength(1);
  });

  it('retries a lost answer under the same name and returns the seqs the first attempt got', async () => {
    dynamo
      .on(UpdateCommand)
      .rejectsOnce(noAnswer())
      .callsFake((input) => {
        throw alreadyApplied(input.ExpressionAttributeValues[':id'], 12);
      });
    expect((await allocator.allocate('s', 3, 't', soon())).firstSeq).toBe(10);
    expect(idOf(1)).toBe(idOf(0));
  });

  it('reads the counter when a failed condition does not send it back (dynalite)', async () => {
    dynamo
      .on(UpdateCommand)
      .rejectsOnce(noAnswer())
      .rejects(new ConditionalCheckFailedException({ message: 'no', $metadata: {} }));
    dynamo.on(GetCommand).callsFake(() => ({ Item: { allocation: idOf(0), lastSeq: 5 } }));
    expect((await allocator.allocate('s', 1, 't', soon())).firstSeq).toBe(5);
  });

  it('applies again when another allocation came in between (the audit voids the lost block)', async () => {
    dynamo
      .on(UpdateCommand)
      .rejectsOnce(noAnswer())
      .rejectsOnce(alreadyApplied('someone-else', 9))
      .resolves({ Attributes: { lastSeq: 11 } });
    expect((await allocator.allocate('s', 2, 't', soon())).firstSeq).toBe(10);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(3);
  });

  it('sends nothing once the deadline has passed: 503, nothing allocated', async () => {
    await expect(
      allocator.allocate('s', 1, 't', new Deadline(Date.now() - 1)),
    ).rejects.toMatchObject({
      name: 'DependencyUnavailableError',
      message: expect.stringContaining('request deadline'),
    });
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('does not retry a refusal', async () => {
    dynamo.on(UpdateCommand).rejects(
      Object.assign(new Error('bad'), {
        name: 'ValidationException',
        $metadata: { httpStatusCode: 400 },
      }),
    );
    // DynamoDB answered: a refusal, not an outage (500, not retriable).
    await expect(allocator.allocate('s', 1, 't', soon())).rejects.toMatchObject({
      name: 'DependencyRefusedError',
      retriable: false,
    });
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(1);
  });
});
