import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import { createLedger } from '../../functions/adapters/dynamodb/ledger.js';
import type { OutcomeStatus } from '../../functions/core/shared/outcomes.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';

/**
 * Every seq of `stream` from 1 to its counter with the fates the ledger holds for it, read
 * straight from DynamoDB (TALLY_STREAMS_TABLE and TALLY_LEDGER_TABLE of the environment).
 */
export async function seqFates(
  endpoint: string,
  stream: string,
): Promise<{ allocated: number; fates: OutcomeStatus[][] }> {
  const client = localDynamoDbClient(endpoint);
  try {
    const documents = DynamoDBDocumentClient.from(client);
    const { Item } = await documents.send(
      new GetCommand({
        TableName: process.env.TALLY_STREAMS_TABLE,
        Key: { stream },
        ConsistentRead: true,
      }),
    );
    const allocated = Number(Item?.lastSeq ?? 0);
    const fates = Array.from({ length: allocated }, (): OutcomeStatus[] => []);
    const ledger = createLedger(documents, String(process.env.TALLY_LEDGER_TABLE));
    await ledger.forEachBlock(stream, (block) => {
      block.outcomes.forEach((outcome, i) => {
        const seq = block.firstSeq + i;
        if (seq > allocated) throw new Error(`${stream}: seq ${seq} recorded, never allocated`);
        fates[seq - 1]?.push(outcome.status);
      });
    });
    return { allocated, fates };
  } finally {
    client.destroy();
  }
}

/** No unexplained hole: every seq 1..counter has exactly one fate. Returns them, seq 1 first. */
export async function expectOneFateEach(endpoint: string, stream: string) {
  const { allocated, fates } = await seqFates(endpoint, stream);
  const wrong = fates.map((f, i) => ({ seq: i + 1, fates: f })).filter((s) => s.fates.length !== 1);
  expect(wrong, `seqs of ${stream} without exactly one fate (1..${allocated})`).toEqual([]);
  return fates.map((f) => f[0] as OutcomeStatus);
}
