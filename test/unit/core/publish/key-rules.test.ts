import { describe, expect, it } from 'vitest';
import { createKeyRules, LostKeyRace } from '../../../../functions/core/publish/key-rules.js';
import type {
  KeyedPublish,
  KeyedPublishes,
  PublishRequest,
} from '../../../../functions/core/publish/ports.js';
import { Deadline } from '../../../../functions/core/shared/deadline.js';
import {
  ConflictError,
  UnprocessableInputError,
} from '../../../../functions/core/shared/errors.js';

// The Idempotency-Key rules on their own, over an in-memory key store: what a stored item decides
// before anything is sent, and how the end of a request stores (or fails to store) its answer.

const request = (idempotencyKey: string | undefined): PublishRequest => ({
  topic: 'orders',
  stream: 'orders',
  idempotencyKey,
  records: [],
  deadline: new Deadline(Date.now() + 5_000),
  now: Date.now(),
});

const item = (over: Partial<KeyedPublish> = {}): KeyedPublish => ({
  idempotencyKey: 'k1',
  fingerprint: 'print-1',
  stream: 'orders',
  topic: 'orders',
  firstSeq: 1,
  count: 2,
  timestamp: 1_700_000_000_000,
  lockedUntil: 0,
  ...over,
});

function memoryKeys(items: KeyedPublish[] = []) {
  const byKey = new Map(items.map((i) => [i.idempotencyKey, i]));
  const gets: string[] = [];
  const finishes: Array<{ key: string; heldUntil: number; answer: unknown }> = [];
  let finishAnswer: boolean | Error = true;
  const keyed: KeyedPublishes = {
    async get(key) {
      gets.push(key);
      return byKey.get(key);
    },
    async claim(claimed) {
      const stored = byKey.get(claimed.idempotencyKey) ?? claimed;
      byKey.set(claimed.idempotencyKey, stored);
      return stored;
    },
    async lock() {
      return true;
    },
    async finish(key, heldUntil, answer) {
      finishes.push({ key, heldUntil, answer });
      if (finishAnswer instanceof Error) throw finishAnswer;
      return finishAnswer;
    },
  };
  return {
    keyed,
    gets,
    finishes,
    finishWith: (answer: boolean | Error) => {
      finishAnswer = answer;
    },
  };
}

describe('keyedState: what a key decides before anything is sent', () => {
  it('decides nothing without a key, and reads no item', async () => {
    const store = memoryKeys([item()]);
    const rules = createKeyRules(store.keyed);
    expect(await rules.keyedState(request(undefined), '', undefined)).toEqual({});
    expect(store.gets).toEqual([]);
  });

  it('decides nothing for a key never used', async () => {
    const store = memoryKeys();
    const rules = createKeyRules(store.keyed);
    expect(await rules.keyedState(request('k1'), 'print-1', undefined)).toEqual({});
    expect(store.gets).toEqual(['k1']);
  });

  it('replays a stored answer, with nothing sent or written', async () => {
    const answer = { offsets: [1, 2] };
    const rules = createKeyRules(memoryKeys([item({ answer })]).keyed);
    expect(await rules.keyedState(request('k1'), 'print-1', undefined)).toEqual({
      replay: { answer, replayed: true, warnings: [] },
    });
  });

  it('refuses a key reused for a different request (422 naming the key), even one answered', async () => {
    const rules = createKeyRules(memoryKeys([item({ answer: { ok: true } })]).keyed);
    const refused = rules.keyedState(request('k1'), 'print-2', undefined);
    await expect(refused).rejects.toBeInstanceOf(UnprocessableInputError);
    await expect(refused).rejects.toMatchObject({ field: 'Idempotency-Key', status: 422 });
  });

  it('answers 409, retry in 1 s, while another request holds the key', async () => {
    const held = item({ lockedUntil: Date.now() + 60_000 });
    const rules = createKeyRules(memoryKeys([held]).keyed);
    const refused = rules.keyedState(request('k1'), 'print-1', undefined);
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    await expect(refused).rejects.toMatchObject({ retryAfterSeconds: 1, status: 409 });
  });

  it('hands back an unanswered item whose lock has lapsed: a retry of an unsettled attempt', async () => {
    const lapsed = item({ lockedUntil: Date.now() - 1 });
    const rules = createKeyRules(memoryKeys([lapsed]).keyed);
    expect(await rules.keyedState(request('k1'), 'print-1', undefined)).toEqual({
      stored: lapsed,
    });
  });

  it('uses the item a claim already read instead of asking the store again', async () => {
    const store = memoryKeys();
    const rules = createKeyRules(store.keyed);
    const known = item({ answer: 'stored' });
    expect(await rules.keyedState(request('k1'), 'print-1', known)).toMatchObject({
      replay: { answer: 'stored', replayed: true },
    });
    expect(store.gets).toEqual([]);
  });
});

describe('finish and release: the end of a keyed request', () => {
  it('stores the answer under the lock the request held', async () => {
    const store = memoryKeys();
    const warnings: string[] = [];
    await createKeyRules(store.keyed).finish(request('k1'), 123, { done: true }, warnings);
    expect(store.finishes).toEqual([{ key: 'k1', heldUntil: 123, answer: { done: true } }]);
    expect(warnings).toEqual([]);
  });

  it('writes nothing without a key or without a lock held', async () => {
    const store = memoryKeys();
    const rules = createKeyRules(store.keyed);
    await rules.finish(request(undefined), 123, 'a', []);
    await rules.finish(request('k1'), undefined, 'a', []);
    await rules.release(request(undefined), 123);
    await rules.release(request('k1'), undefined);
    expect(store.finishes).toEqual([]);
  });

  it('warns, without failing, when the lock was taken over or the store failed', async () => {
    const store = memoryKeys();
    const rules = createKeyRules(store.keyed);
    const warnings: string[] = [];
    store.finishWith(false);
    await rules.finish(request('k1'), 1, 'a', warnings);
    store.finishWith(new Error('DynamoDB timed out'));
    await rules.finish(request('k1'), 1, 'a', warnings);
    expect(warnings).toEqual([
      'Idempotency-Key: the lock was taken over; the answer was not stored',
      'Idempotency-Key: the answer was not stored (a retry runs again with the same seqs): Error: DynamoDB timed out',
    ]);
  });

  it('release frees the lock without an answer, and swallows a failure (best effort)', async () => {
    const store = memoryKeys();
    const rules = createKeyRules(store.keyed);
    await rules.release(request('k1'), 7);
    store.finishWith(new Error('unreachable'));
    await expect(rules.release(request('k1'), 8)).resolves.toBeUndefined();
    expect(store.finishes).toEqual([
      { key: 'k1', heldUntil: 7, answer: undefined },
      { key: 'k1', heldUntil: 8, answer: undefined },
    ]);
  });
});

describe('LostKeyRace', () => {
  it("carries the refusal's message, the give-back of the unsent seqs and the winner's item", () => {
    let given = 0;
    const winner = item();
    const error = createKeyRules(memoryKeys().keyed).conflict();
    const race = new LostKeyRace(error, () => given++, winner);
    expect(race.message).toBe(error.message);
    expect(race.error).toBe(error);
    expect(race.winner).toBe(winner);
    race.giveBack();
    expect(given).toBe(1);
  });
});
