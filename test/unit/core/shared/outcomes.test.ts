import { describe, expect, it } from 'vitest';
import {
  decodeOutcome,
  encodeOutcome,
  isRetriable,
  isSettled,
  outcomeStatusCode,
  type RecordOutcome,
} from '../../../../functions/core/shared/outcomes.js';

const acked: RecordOutcome = { status: 'ACKED', partition: 3, offset: '9007199254740993' };
const failed: RecordOutcome = {
  status: 'FAILED',
  kafkaError: 'NOT_LEADER_OR_FOLLOWER',
  message: 'leader moved',
};
const tooLarge: RecordOutcome = {
  status: 'FAILED',
  kafkaError: 'MESSAGE_TOO_LARGE',
  message: 'too big',
};
const listTooLarge: RecordOutcome = {
  status: 'FAILED',
  kafkaError: 'RECORD_LIST_TOO_LARGE',
  message: 'batch too big',
};
const notSent: RecordOutcome = { status: 'NOT_SENT', message: 'no connection' };
const unknown: RecordOutcome = { status: 'UNKNOWN', message: 'timed out' };
const voided: RecordOutcome = { status: 'VOID', message: 'allocated, never sent' };

describe('outcomeStatusCode', () => {
  it('maps each outcome to its HTTP status', () => {
    expect(outcomeStatusCode(acked)).toBe(200);
    expect(outcomeStatusCode(failed)).toBe(502);
    expect(outcomeStatusCode(tooLarge)).toBe(413);
    expect(outcomeStatusCode(listTooLarge)).toBe(413);
    expect(outcomeStatusCode(notSent)).toBe(503);
    expect(outcomeStatusCode(unknown)).toBe(504);
    expect(outcomeStatusCode(voided)).toBe(503);
  });
});

describe('isRetriable', () => {
  it('is false for ACKED and for too-large failures', () => {
    expect(isRetriable(acked)).toBe(false);
    expect(isRetriable(tooLarge)).toBe(false);
    expect(isRetriable(listTooLarge)).toBe(false);
  });

  it('is true for other failures, NOT_SENT and UNKNOWN', () => {
    expect(isRetriable(failed)).toBe(true);
    expect(isRetriable(notSent)).toBe(true);
    expect(isRetriable(unknown)).toBe(true);
  });

  it('is false for VOID: its seqs are never sent, only a new request can send the record', () => {
    expect(isRetriable(voided)).toBe(false);
  });
});

describe('isSettled', () => {
  it('is true for ACKED and FAILED only', () => {
    expect(isSettled(acked)).toBe(true);
    expect(isSettled(failed)).toBe(true);
    expect(isSettled(tooLarge)).toBe(true);
    expect(isSettled(notSent)).toBe(false);
    expect(isSettled(unknown)).toBe(false);
    expect(isSettled(voided)).toBe(false);
  });
});

describe('encodeOutcome / decodeOutcome', () => {
  it('encodes each status as a compact tuple', () => {
    expect(encodeOutcome(acked)).toEqual(['A', 3, '9007199254740993']);
    expect(encodeOutcome(failed)).toEqual(['F', 'NOT_LEADER_OR_FOLLOWER', 'leader moved']);
    expect(encodeOutcome(notSent)).toEqual(['N', 'no connection']);
    expect(encodeOutcome(unknown)).toEqual(['U', 'timed out']);
    expect(encodeOutcome(voided)).toEqual(['V', 'allocated, never sent']);
  });

  it.each([acked, failed, tooLarge, listTooLarge, notSent, unknown, voided])(
    'round-trips $status',
    (outcome) => {
      expect(decodeOutcome(encodeOutcome(outcome))).toEqual(outcome);
      // And through JSON, as the ledger stores it.
      const stored = JSON.parse(JSON.stringify(encodeOutcome(outcome))) as ReturnType<
        typeof encodeOutcome
      >;
      expect(decodeOutcome(stored)).toEqual(outcome);
    },
  );

  it('keeps a 64-bit offset exact (it is a string)', () => {
    const decoded = decodeOutcome(encodeOutcome(acked));
    expect(decoded.status === 'ACKED' && decoded.offset).toBe('9007199254740993');
  });
});
