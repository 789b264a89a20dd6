// Every request has one deadline (seed 003): nothing waits past it, and what was still pending
// then is reported NOT_SENT or UNKNOWN, never left hanging.

export interface DeadlineInputs {
  readonly now: number;
  /** API Gateway's integration timeout, from request start. */
  readonly gatewayTimeoutMs: number;
  /** Lambda's getRemainingTimeInMillis(), when there is a Lambda context. */
  readonly lambdaRemainingMs: number | undefined;
  /** Kept back from Lambda's remaining time to record outcomes and answer. */
  readonly marginMs: number;
  /** A client's own budget (request header), when it sent one. */
  readonly clientTimeoutMs: number | undefined;
}

export class Deadline {
  constructor(readonly at: number) {}

  static compute(inputs: DeadlineInputs): Deadline {
    const budgets = [inputs.gatewayTimeoutMs - inputs.marginMs];
    if (inputs.lambdaRemainingMs !== undefined) {
      budgets.push(inputs.lambdaRemainingMs - inputs.marginMs);
    }
    if (inputs.clientTimeoutMs !== undefined) budgets.push(inputs.clientTimeoutMs);
    return new Deadline(inputs.now + Math.max(0, Math.min(...budgets)));
  }

  remainingMs(now = Date.now()): number {
    return Math.max(0, this.at - now);
  }

  expired(now = Date.now()): boolean {
    return now >= this.at;
  }

  /** This deadline less `ms` (never before now): time kept back for what must follow. */
  less(ms: number, now = Date.now()): Deadline {
    return new Deadline(Math.max(now, this.at - ms));
  }
}

export class DeadlineExceeded extends Error {
  override readonly name = 'DeadlineExceeded';
}

/** Resolves like `work`, or rejects with DeadlineExceeded when the deadline comes first. */
export async function beforeDeadline<T>(work: Promise<T>, deadline: Deadline, what: string) {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DeadlineExceeded(`${what}: no answer before the request deadline`)),
      deadline.remainingMs(),
    );
  });
  try {
    return await Promise.race([work, expiry]);
  } finally {
    clearTimeout(timer);
  }
}
