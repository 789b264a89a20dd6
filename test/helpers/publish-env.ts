import { inject } from 'vitest';
import { createLocalTables, localDynamoDbClient } from '../../infra/local/local-tables.js';
import { uniqueName } from './unique-name.js';

/**
 * Fresh tables for one test file and the environment the publish functions read. Call before
 * importing a handler: configuration is read when the module loads, as in Lambda.
 */
export async function usePublishEnv(
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  const client = localDynamoDbClient(inject('dynamodbEndpoint'));
  const tables = await createLocalTables(client, `${uniqueName('pub')}-`);
  client.destroy();
  const env = {
    KAFKA_BROKERS: inject('kafkaBrokers'),
    DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
    TALLY_STREAMS_TABLE: tables.StreamsTable as string,
    TALLY_LEDGER_TABLE: tables.LedgerTable as string,
    TALLY_RESERVATIONS_TABLE: tables.ReservationsTable as string,
    TALLY_IDEMPOTENCY_TABLE: tables.IdempotencyTable as string,
    TALLY_MAPPINGS_TABLE: tables.MappingsTable as string,
    TALLY_OFFSET_HISTORY_TABLE: tables.OffsetHistoryTable as string,
    TALLY_RECONCILE_REPORTS_TABLE: tables.ReconcileReportsTable as string,
    TALLY_RECEIPTS_TABLE: tables.ReceiptsTable as string,
    TALLY_AUDITS_TABLE: tables.AuditsTable as string,
    AWS_REGION: 'us-east-1',
    LOG_LEVEL: 'error',
    ...extra,
  };
  Object.assign(process.env, env);
  return env;
}
