// Topics of Tally records for the benchmarks, written by the Java client
// (bench/java/TallyRecords.java): kafkajs would take minutes to encode millions. Records carry
// `tally.*` headers, 1,000-seq blocks each on one partition, as publish requests send them.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Kafka, logLevel } from 'kafkajs';
import type { createLedger } from '../functions/adapters/dynamodb/ledger.js';
import type { RecordOutcome } from '../functions/core/shared/outcomes.js';
import { resolveKafkaJars } from '../infra/local/kafka-jars.js';
import { localDynamoDbClient } from '../infra/local/local-tables.js';
import { pool, ROOT } from './harness.js';

/** The clients a bench writing Tally records needs: Kafka's (quiet), its admin, DynamoDB's. */
export function benchClients(
  stack: { kafkaBrokers: string; dynamodbEndpoint: string },
  clientId: string,
) {
  const kafka = new Kafka({
    clientId,
    brokers: stack.kafkaBrokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const dynamodb = localDynamoDbClient(stack.dynamodbEndpoint);
  return {
    kafka,
    admin: kafka.admin(),
    dynamodb,
    documents: DynamoDBDocumentClient.from(dynamodb),
  };
}

/** What the audit functions read in a bench: the stack, quiet logs, no horizon, long scans. */
export function auditBenchEnv(stack: { kafkaBrokers: string; dynamodbEndpoint: string }) {
  return {
    KAFKA_BROKERS: stack.kafkaBrokers,
    DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
    AWS_REGION: 'us-east-1',
    LOG_LEVEL: 'error',
    TALLY_DYNAMODB_TIMEOUT_MS: '30000',
    TALLY_AUDIT_HORIZON_SECONDS: '0',
    TALLY_AUDIT_SCAN_TIMEOUT_MS: '900000',
    // Every ledger write is answered before the audits start: no write is in flight.
    TALLY_AUDIT_LEDGER_LAG_SECONDS: '1',
  };
}

export interface TallyRecordsRun {
  readonly brokers: string;
  readonly topic: string;
  readonly session: string;
  readonly records: number;
  readonly block: number;
  readonly partitions: number;
  readonly valueBytes: number;
}

/** Compiles the writer into `classes` (a temp dir); returns a function that runs it. */
export async function tallyRecordsWriter(classes: string) {
  const classpath = (await resolveKafkaJars()).classpath;
  execFileSync('javac', [
    '-cp',
    classpath,
    '-d',
    classes,
    join(ROOT, 'bench/java/TallyRecords.java'),
  ]);
  /** Writes `records` to `topic` (its stream: the topic); each block as [firstSeq, partition, base offset]. */
  return (run: TallyRecordsRun): Array<[number, number, number]> =>
    execFileSync(
      'java',
      [
        '-cp',
        `${classpath}:${classes}`,
        'TallyRecords',
        run.brokers,
        run.topic,
        run.topic,
        run.session,
        String(run.records),
        String(run.block),
        String(run.partitions),
        String(run.valueBytes),
      ],
      { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'] },
    )
      .trim()
      .split('\n')
      .map((line) => line.split(' ').map(Number) as [number, number, number]);
}

/**
 * One ledger block per written block, ACKED where Kafka put each record; the last `unknown` seqs
 * of the run UNKNOWN (sent, no answer), as the audit later settles them.
 */
export async function writeLedgerBlocks(
  ledger: Pick<ReturnType<typeof createLedger>, 'write'>,
  run: TallyRecordsRun,
  placed: ReadonlyArray<readonly [number, number, number]>,
  unknown = 0,
): Promise<void> {
  await pool(placed, 16, async ([firstSeq, partition, base]) => {
    const last = firstSeq + run.block - 1 === run.records;
    const outcomes = Array.from(
      { length: run.block },
      (_, i): RecordOutcome =>
        last && i >= run.block - unknown
          ? { status: 'UNKNOWN', message: 'bench: no answer in time' }
          : { status: 'ACKED', partition, offset: String(base + i) },
    );
    await ledger.write({
      stream: run.topic,
      firstSeq,
      topic: run.topic,
      session: run.session,
      idempotencyKey: undefined,
      outcomes,
    });
  });
}
