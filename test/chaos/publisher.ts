// One publisher of the chaos workload: a child process, so each has its own module instances
// (its own "Lambda container": producer, SDK clients, runtime). It calls the real batch handler in
// a loop until told to stop, retrying as a careful client does, and appends every answer it gets
// to a JSON-lines file the checker reads. Started by run.ts with the publish environment set.
import { appendFileSync } from 'node:fs';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { between, seededRandom } from './random.js';

export interface PublisherConfig {
  readonly id: number;
  readonly seed: number;
  readonly topic: string;
  readonly clusterId: string;
  /** Answers, one JSON line each. */
  readonly out: string;
  /** Share of requests that carry an Idempotency-Key. */
  readonly keyedShare: number;
  readonly timeoutMs: number;
}

/** What the checker reads: one line per answer. */
export interface AnswerLine {
  readonly client: number;
  readonly request: string;
  readonly key: string | null;
  readonly attempt: number;
  readonly sentAt: string;
  readonly answeredAt: string;
  readonly status: number;
  /** The entries this attempt sent, by id. */
  readonly ids: readonly string[];
  readonly reports: ReadonlyArray<{
    readonly id: string;
    readonly error_code: number;
    readonly outcome?: string;
    readonly retriable?: boolean;
    readonly stream?: string;
    readonly seq?: number;
    readonly partition_id?: number;
    readonly offset?: number;
    readonly message?: string;
  }>;
  /** The body of an answer that is not a 207. */
  readonly error?: string;
}

const config = JSON.parse(String(process.env.TALLY_CHAOS_PUBLISHER)) as PublisherConfig;
const { handler } = await import('../../functions/publish/batch-handler.js');
const random = seededRandom(config.seed * 7919 + config.id);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let stopping = false;
process.on('message', (message) => {
  if (message === 'stop') stopping = true;
});
process.on('disconnect', () => {
  stopping = true;
});

type Entry = {
  id: string;
  key: { type: 'STRING'; data: string };
  value: { type: 'STRING'; data: string };
};

async function send(entries: readonly Entry[], key: string | undefined) {
  const sentAt = new Date().toISOString();
  const response = (await handler(
    httpEvent({
      pathParameters: { cluster_id: config.clusterId, topic_name: config.topic },
      headers: {
        'Tally-Timeout-Ms': String(config.timeoutMs),
        ...(key !== undefined && { 'Idempotency-Key': key }),
      },
      body: JSON.stringify({ entries }),
    }),
    lambdaContext(29_000),
  )) as { statusCode: number; body: string };
  return { sentAt, response };
}

for (let request = 1; !stopping; request++) {
  const name = `c${config.id}-r${request}`;
  const keyed = random() < config.keyedShare;
  const key = keyed ? `${name}-${config.seed}` : undefined;
  const all: Entry[] = Array.from({ length: between(random, 1, 12) }, (_, i) => ({
    id: `${name}-e${i}`,
    key: { type: 'STRING', data: `k${between(random, 0, 50)}` },
    value: { type: 'STRING', data: `${name}-e${i}` },
  }));
  let entries = all;
  for (let attempt = 1; attempt <= 6; attempt++) {
    const { sentAt, response } = await send(entries, key);
    let reports: AnswerLine['reports'] = [];
    if (response.statusCode === 207) {
      const body = JSON.parse(response.body) as {
        successes: AnswerLine['reports'];
        failures: AnswerLine['reports'];
      };
      reports = [...body.successes, ...body.failures];
    }
    const line: AnswerLine = {
      client: config.id,
      request: name,
      key: key ?? null,
      attempt,
      sentAt,
      answeredAt: new Date().toISOString(),
      status: response.statusCode,
      ids: entries.map((e) => e.id),
      reports,
      ...(response.statusCode !== 207 && { error: response.body.slice(0, 500) }),
    };
    appendFileSync(config.out, `${JSON.stringify(line)}\n`);
    // A careful client: a whole answer of 5xx is retried; per entry, a keyed request is sent
    // again whole (the key returns what was settled, resends the rest under the same seqs),
    // and without a key only what is known not written (503) is sent again, as new records.
    let again: Entry[];
    if (response.statusCode >= 500) again = entries;
    else if (response.statusCode !== 207) again = [];
    else if (keyed) again = reports.some((r) => r.error_code !== 200 && r.retriable) ? entries : [];
    else {
      const retry = new Set(
        reports.filter((r) => r.error_code === 503 && r.retriable).map((r) => r.id),
      );
      again = entries.filter((e) => retry.has(e.id));
    }
    if (again.length === 0 || stopping) break;
    entries = again;
    await sleep(Math.min(4000, 300 * 2 ** attempt));
  }
}
process.exit(0);
