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

async function audit(label: string) {
  const at = new Date().toISOString();
  try {
    const { audits } = (await auditTask({ topic: config.topic }, lambdaContext(300_000))) as {
      audits: Array<{ auditId: string }>;
    };
    const auditId = audits[0]?.auditId ?? '';
    const read = (await auditRead(
      httpEvent({ pathParameters: { cluster_id: config.clusterId, audit_id: auditId } }),
      lambdaContext(),
    )) as { statusCode: number; body: string };
    const line = { label, at, auditId, status: read.statusCode, report: JSON.parse(read.body) };
    appendFileSync(config.auditOut, `${JSON.stringify(line)}\n`);
    return { label, ok: read.statusCode === 200, auditId };
  } catch (error) {
    appendFileSync(config.auditOut, `${JSON.stringify({ label, at, error: message(error) })}\n`);
    return { label, ok: false, error: message(error) };
  }
}

/** Asks the lookup route about each seq (what a client asks after the fact); one line each. */
async function lookUp(stream: string, seqs: readonly number[]) {
  let answered = 0;
  for (const seq of seqs) {
    const response = (await lookup(
      httpEvent({
        pathParameters: { cluster_id: config.clusterId },
        query: { stream, seq: String(seq) },
      }),
      lambdaContext(),
    )) as { statusCode: number; body: string };
    appendFileSync(
      config.lookupOut,
      `${JSON.stringify({ seq, status: response.statusCode, body: JSON.parse(response.body) })}\n`,
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
    lookup?: { stream: string; seqs: number[] };
  }) => {
    if (request.lookup !== undefined) {
      void lookUp(request.lookup.stream, request.lookup.seqs).then(
        (answer) => process.send?.({ label: 'lookup', ...answer }),
        (error: unknown) => process.send?.({ label: 'lookup', error: message(error) }),
      );
    }
    if (request.quiet) quiet = true;
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
    if (!stopping && !quiet) await audit(`scheduled ${n}`);
  }
})();
process.send?.({ ready: true });
