import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError } from '../../core/shared/errors.js';
import { dynamoDbUnavailable } from './client.js';
import { readAll } from './read-all.js';

const KEEP_DAYS = 30;

export type ApprovalState = 'PENDING' | 'APPROVED' | 'REJECTED';

export interface Approval {
  readonly approvalId: string;
  /** The Step Functions task token the workflow waits on (never shown to callers). */
  readonly taskToken: string;
  readonly workflow: string;
  readonly execution: string | undefined;
  readonly subject: object;
  readonly state: ApprovalState;
  readonly requestedAt: string;
  readonly decidedAt?: string;
  readonly decidedBy?: string;
  readonly reason?: string;
}

/** Approvals a workflow waits for, by approval id; decided once (a conditional update). */
export function createApprovalsStore(client: DynamoDBDocumentClient, tableName: string) {
  const fromItem = (item: Record<string, unknown>) =>
    ({ ...item, subject: JSON.parse(String(item.subject)) }) as Approval;
  return {
    async create(approval: Approval): Promise<void> {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...approval,
              subject: JSON.stringify(approval.subject),
              expiresAt: Math.floor(Date.now() / 1000) + KEEP_DAYS * 86_400,
            },
            ConditionExpression: 'attribute_not_exists(approvalId)',
          }),
        );
      } catch (error) {
        throw dynamoDbUnavailable(`storing approval ${approval.approvalId}`, error);
      }
    },

    async get(approvalId: string): Promise<Approval | undefined> {
      try {
        const { Item } = await client.send(
          new GetCommand({ TableName: tableName, Key: { approvalId }, ConsistentRead: true }),
        );
        return Item ? fromItem(Item) : undefined;
      } catch (error) {
        throw dynamoDbUnavailable(`reading approval ${approvalId}`, error);
      }
    },

    /** Approvals still waiting for a decision, oldest first. */
    async pending(): Promise<Approval[]> {
      const items = await readAll(
        client,
        {
          scan: {
            TableName: tableName,
            FilterExpression: '#state = :pending',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':pending': 'PENDING' },
            ConsistentRead: true,
          },
        },
        'listing pending approvals',
      );
      return items.map(fromItem).sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
    },

    /**
     * Records the decision on a PENDING approval and returns it. The same decision again returns
     * the approval as it is (to be sent again); the other decision is refused.
     */
    async decide(
      approvalId: string,
      decision: { state: 'APPROVED' | 'REJECTED'; by: string; reason: string | undefined },
    ): Promise<Approval> {
      try {
        const { Attributes } = await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { approvalId },
            UpdateExpression:
              'SET #state = :state, decidedAt = :at, decidedBy = :by' +
              (decision.reason === undefined ? '' : ', reason = :reason'),
            ConditionExpression: 'attribute_exists(approvalId) AND #state = :pending',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: {
              ':state': decision.state,
              ':at': new Date().toISOString(),
              ':by': decision.by,
              ':pending': 'PENDING',
              ...(decision.reason !== undefined && { ':reason': decision.reason }),
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return fromItem(Attributes ?? {});
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) {
          const current = await this.get(approvalId);
          if (!current) {
            throw new NotFoundError(`token: no approval ${approvalId}`, { field: 'token' });
          }
          // The same decision again (say, after Step Functions did not answer): sent again.
          if (current.state === decision.state) return current;
          throw new ConflictError(
            `token: approval ${approvalId} was already ${current.state.toLowerCase()}${current.decidedBy ? ` by ${current.decidedBy}` : ''}`,
            { field: 'token' },
          );
        }
        throw dynamoDbUnavailable(`recording the decision on approval ${approvalId}`, error);
      }
    },
  };
}
