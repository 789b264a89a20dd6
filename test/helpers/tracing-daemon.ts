import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';

// Where the X-Ray daemon would listen, for tests that trace with the real Tracer: a UDP socket
// on loopback keeping every document it is sent (subsegments nested in them flattened out).

/** The fields of an X-Ray segment or subsegment document the tests read. */
export interface XrayDocument {
  readonly id: string;
  readonly name: string;
  readonly trace_id: string;
  readonly parent_id?: string;
  readonly annotations?: Record<string, unknown>;
  readonly fault?: boolean;
  readonly error?: boolean;
  readonly cause?: { exceptions?: Array<{ type?: string; message?: string }> };
  readonly aws?: Record<string, unknown>;
  readonly subsegments?: XrayDocument[];
}

export interface XrayDaemon {
  /** For AWS_XRAY_DAEMON_ADDRESS. */
  readonly address: string;
  /** Every document received so far (the caller may empty it). */
  readonly documents: XrayDocument[];
  close(): Promise<void>;
}

export async function startXrayDaemon(): Promise<XrayDaemon> {
  const socket = createSocket('udp4');
  const documents: XrayDocument[] = [];
  const flatten = (doc: XrayDocument): XrayDocument[] => [
    doc,
    ...(doc.subsegments ?? []).flatMap(flatten),
  ];
  socket.on('message', (message) => {
    // A header line, then the document.
    const text = message.toString('utf8');
    documents.push(...flatten(JSON.parse(text.slice(text.indexOf('\n') + 1))));
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    documents,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** A new sampled trace, as Lambda puts one in _X_AMZN_TRACE_ID per invocation: its id and header. */
export function newTrace(): { readonly traceId: string; readonly header: string } {
  const traceId = `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
  return {
    traceId,
    header: `Root=${traceId};Parent=${randomBytes(8).toString('hex')};Sampled=1`,
  };
}

/** What Lambda sets and the X-Ray SDK and the Tracer read when they load (with the daemon's). */
export function lambdaTracingEnv(
  daemon: XrayDaemon,
  functionName: string,
  handler: string,
): Record<string, string> {
  return {
    TALLY_TRACING: 'true',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    LAMBDA_TASK_ROOT: '/var/task',
    _HANDLER: handler,
    AWS_XRAY_DAEMON_ADDRESS: daemon.address,
    AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
  };
}
