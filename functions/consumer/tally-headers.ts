// The `tally.*` headers publish puts on every record, read from a record in either shape a
// consumer gets: Lambda's MSK event (`headers: [{name: [bytes]}]`) or kafkajs'
// (`headers: {name: Buffer | string | array}`).

type KafkajsHeaderValue = Buffer | string | ReadonlyArray<Buffer | string> | undefined;

export type HeaderSource =
  | { readonly headers?: ReadonlyArray<Readonly<Record<string, number[]>>> | undefined }
  | { readonly headers?: Readonly<Record<string, KafkajsHeaderValue>> | undefined };

export interface TallyHeaders {
  readonly stream: string | undefined;
  /** The record's sequence number in its stream; undefined when absent or not a positive integer. */
  readonly seq: number | undefined;
  readonly session: string | undefined;
  readonly idempotencyKey: string | undefined;
}

/** One header's value as text (the first, if a kafkajs header was sent more than once). */
export function headerValue(record: HeaderSource, name: string): string | undefined {
  const { headers } = record;
  if (headers === undefined || headers === null) return undefined;
  if (Array.isArray(headers)) {
    for (const header of headers as ReadonlyArray<Readonly<Record<string, number[]>>>) {
      if (typeof header !== 'object' || header === null) continue;
      const bytes = header[name];
      if (Array.isArray(bytes)) return Buffer.from(bytes).toString('utf8');
    }
    return undefined;
  }
  const value = (headers as Readonly<Record<string, KafkajsHeaderValue>>)[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === null ? undefined : first.toString();
}

/** Tally's headers of a record: which stream and seq it is, who sent it, under which key. */
export function tallyHeaders(record: HeaderSource): TallyHeaders {
  const seqText = headerValue(record, 'tally.seq');
  const seq = seqText !== undefined && /^[0-9]{1,16}$/.test(seqText) ? Number(seqText) : Number.NaN;
  return {
    stream: headerValue(record, 'tally.stream'),
    seq: Number.isSafeInteger(seq) && seq > 0 ? seq : undefined,
    session: headerValue(record, 'tally.session'),
    idempotencyKey: headerValue(record, 'tally.idempotency-key'),
  };
}
