import { describe, expect, it } from 'vitest';
import {
  beforeDeadline,
  Deadline,
  DeadlineExceeded,
} from '../../../../functions/core/shared/deadline.js';

const base = { now: 1_000_000, marginMs: 500 };

describe('Deadline.compute', () => {
  it('uses the gateway timeout minus the margin when it is the only budget', () => {
    const d = Deadline.compute({
      ...base,
      gatewayTimeoutMs: 29_000,
      lambdaRemainingMs: undefined,
      clientTimeoutMs: undefined,
    });
    expect(d.at).toBe(1_000_000 + 28_500);
  });

  it('takes Lambda remaining time minus the margin when it is the smallest', () => {
    const d = Deadline.compute({
      ...base,
      gatewayTimeoutMs: 29_000,
      lambdaRemainingMs: 10_000,
      clientTimeoutMs: undefined,
    });
    expect(d.at).toBe(1_000_000 + 9_500);
  });

  it('takes the client timeout (no margin) when it is the smallest', () => {
    const d = Deadline.compute({
      ...base,
      gatewayTimeoutMs: 29_000,
      lambdaRemainingMs: 10_000,
      clientTimeoutMs: 2_000,
    });
    expect(d.at).toBe(1_000_000 + 2_000);
  });

  it('ignores a client timeout larger than the other budgets', () => {
    const d = Deadline.compute({
      ...base,
      gatewayTimeoutMs: 29_000,
      lambdaRemainingMs: 10_000,
      clientTimeoutMs: 60_000,
    });
    expect(d.at).toBe(1_000_000 + 9_500);
  });

  it('takes the gateway budget when Lambda has more time left', () => {
    const d = Deadline.compute({
      ...base,
      gatewayTimeoutMs: 5_000,
      lambdaRemainingMs: 900_000,
      clientTimeoutMs: 6_000,
    });
    expect(d.at).toBe(1_000_000 + 4_500);
  });

  it('is never before now', () => {
    const d = Deadline.compute({
      ...base,
      gatewayTimeoutMs: 29_000,
      lambdaRemainingMs: 100,
      clientTimeoutMs: undefined,
    });
    expect(d.at).toBe(1_000_000);
    expect(d.remainingMs(1_000_000)).toBe(0);
    expect(d.expired(1_000_000)).toBe(true);
  });
});

describe('Deadline', () => {
  it('reports remaining time, never negative, and expiry', () => {
    const d = new Deadline(5_000);
    expect(d.remainingMs(4_000)).toBe(1_000);
    expect(d.remainingMs(6_000)).toBe(0);
    expect(d.expired(4_999)).toBe(false);
    expect(d.expired(5_000)).toBe(true);
    expect(d.expired(5_001)).toBe(true);
  });

  it('defaults to the current time', () => {
    const d = new Deadline(Date.now() + 60_000);
    expect(d.remainingMs()).toBeGreaterThan(59_000);
    expect(d.remainingMs()).toBeLessThanOrEqual(60_000);
    expect(d.expired()).toBe(false);
    expect(new Deadline(Date.now() - 1).expired()).toBe(true);
  });
});

describe('beforeDeadline', () => {
  const sleep = <T>(ms: number, value: T) =>
    new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

  it("resolves with the work's value when the work is first", async () => {
    const deadline = new Deadline(Date.now() + 1_000);
    await expect(beforeDeadline(sleep(5, 'done'), deadline, 'work')).resolves.toBe('done');
  });

  it('resolves with work that is already done even if the deadline has passed', async () => {
    const deadline = new Deadline(Date.now() - 10);
    await expect(beforeDeadline(Promise.resolve(42), deadline, 'work')).resolves.toBe(42);
  });

  it('rejects with DeadlineExceeded when the deadline comes first', async () => {
    const started = Date.now();
    const deadline = new Deadline(started + 30);
    const error = await beforeDeadline(sleep(2_000, 'late'), deadline, 'describe topic').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeadlineExceeded);
    expect((error as DeadlineExceeded).name).toBe('DeadlineExceeded');
    expect((error as DeadlineExceeded).message).toContain('describe topic');
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(25);
    expect(waited).toBeLessThan(1_000);
  });

  it("propagates the work's own rejection", async () => {
    const deadline = new Deadline(Date.now() + 1_000);
    const failure = new Error('broker said no');
    await expect(beforeDeadline(Promise.reject(failure), deadline, 'send')).rejects.toBe(failure);
  });
});

describe('Deadline.less', () => {
  it('is the deadline less the time kept back, never before now', () => {
    const deadline = new Deadline(10_000);
    expect(deadline.less(250, 5_000).at).toBe(9_750);
    expect(deadline.less(8_000, 5_000).at).toBe(5_000);
  });
});
