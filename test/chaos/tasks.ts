// The scheduled side of the chaos workload, in a child process of its own (its own "containers"
// of reconcile and audit): reconcile every few seconds, and an audit whenever run.ts asks. Every
// result goes to a JSON-lines file the checker reads; audits are also answered over IPC.
import { appendFileSync } from 'node:fs';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';

export interface TasksConfig {
  readonly topic: string;
  readonly clusterId: string;
  readonly reconcileEveryMs: number;
  /** Audits on a schedule too, as EventBridge runs them: each report names its newest findings. */
  readonly auditEveryMs: number;
  readonly reconcileOut: string;
  readonly auditOut: string;
  readonly lookupOut: string;
  /** The transactional workload's topic (TALLY_TRANSACTIONAL_TOPICS names it), audited too. */
  readonly txnTopic?: string;
  /** Its audits, one JSON line each, apart from the idempotent topic's. */
  readonly txnAuditOut?: string;
}

const config = JSON.parse(String(process.env.TALLY_CHAOS_TASKS)) as TasksConfig;
const reconcile = (await import('../../functions/reconcile/task-handler.js')).handler;
const auditTask = (await import('../../functions/audit/task-handler.js')).handler;
const auditRead = (await import('../../functions/audit/read-handler.js')).handler;
const lookup = (await import('../../functions/publish/lookup-handler.js')).handler;
const message = (error: unknown) =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

let stopping = false;
/** Set before the audit after the faults: scheduled audits would race it for the checkpoint. */
let quiet = false;
/** The scheduled audit running, if any: `quiet` is answered once it has ended. */
let scheduled: Promise<unknown> = Promise.resolve();
async function reconcileLoop() {
  while (!stopping) {
    const at = new Date().toISOString();
    try {
      const summary = await reconcile({}, lambdaContext(60_000));
      appendFileSync(config.reconcileOut, `${JSON.stringify({ at, summary })}\n`);
    } catch (error) {
      appendFileSync(config.reconcileOut, `${JSON.stringify({ at, error: message(error) })}\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, config.reconcileEveryMs));
  }
}

/** Audits the workload's topics one after another; ok only if every one was read to its end. */
async function audit(label: string) {
  const first = await auditTopic(label, config.topic, config.auditOut);
  if (config.txnTopic === undefined || config.txnAuditOut === undefined) return first;
  const txn = await auditTopic(label, config.txnTopic, config.txnAuditOut);
  return first.ok ? txn : first;
}

async function auditTopic(label: string, topic: string, out: string) {
  const at = new Date().toISOString();
  try {
    const { audits } = (await auditTask({ topic }, lambdaContext(300_000))) as {
      audits: Array<{ auditId: string }>;
    };
    const auditId = audits[0]?.auditId ?? '';
    const read = (await auditRead(
      httpEvent({ pathParameters: { cluster_id: config.clusterId, audit_id: auditId } }),
      lambdaContext(),
    )) as { statusCode: number; body: string };
    const line = {
      label,
      at,
      topic,
      auditId,
      status: read.statusCode,
      report: JSON.parse(read.body),
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
    return { label, ok: read.statusCode === 200, auditId };
  } catch (error) {
    appendFileSync(out, `${JSON.stringify({ label, at, topic, error: message(error) })}\n`);
    return { label, ok: false, error: message(error) };
  }
}

/** Asks the lookup route about each seq (what a client asks after the fact); one line each. */
async function lookUp(stream: string, seqs: readonly number[], out = config.lookupOut) {
  let answered = 0;
  for (const seq of seqs) {
    const at = new Date().toISOString();
    const response = (await lookup(
      httpEvent({
        pathParameters: { cluster_id: config.clusterId },
        query: { stream, seq: String(seq) },
      }),
      lambdaContext(),
    )) as { statusCode: number; body: string };
    appendFileSync(
      out,
      `${JSON.stringify({ seq, at, status: response.statusCode, body: JSON.parse(response.body) })}\n`,
    );
    answered++;
  }
  return { lookups: answered };
}

process.on(
  'message',
  (request: {
    audit?: string;
    stop?: boolean;
    quiet?: boolean;
    /** `label` names the answer over IPC ('lookup' by default), `out` the file (lookupOut). */
    lookup?: { stream: string; seqs: number[]; label?: string; out?: string };
  }) => {
    if (request.lookup !== undefined) {
      const label = request.lookup.label ?? 'lookup';
      void lookUp(request.lookup.stream, request.lookup.seqs, request.lookup.out).then(
        (answer) => process.send?.({ label, ...answer }),
        (error: unknown) => process.send?.({ label, error: message(error) }),
      );
    }
    if (request.quiet) {
      quiet = true;
      void scheduled.then(() => process.send?.({ label: 'quiet' }));
    }
    if (request.stop) {
      stopping = true;
      process.exit(0);
    }
    if (request.audit !== undefined)
      void audit(request.audit).then((answer) => process.send?.(answer));
  },
);
process.on('disconnect', () => process.exit(0));
void reconcileLoop();
void (async () => {
  for (let n = 1; !stopping && !quiet; n++) {
    await new Promise((resolve) => setTimeout(resolve, config.auditEveryMs));
    if (stopping || quiet) break;
    scheduled = audit(`scheduled ${n}`);
    await scheduled;
  }
})();
process.send?.({ ready: true });
