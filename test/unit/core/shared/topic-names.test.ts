import { describe, expect, it } from 'vitest';
import {
  isInternalTopic,
  MAX_TOPIC_NAME_LENGTH,
  topicAllowList,
  topicNameProblem,
} from '../../../../functions/core/shared/topic-names.js';

describe('topicNameProblem', () => {
  it('accepts legal names made of letters, digits, ".", "_" and "-"', () => {
    for (const name of [
      'a',
      'orders',
      'fincx.repayment.status',
      'my_topic-v2',
      'A.b_C-9',
      '...',
      '.hidden',
      '_x',
      '-',
      '0123456789',
    ]) {
      expect(topicNameProblem(name), name).toBeUndefined();
    }
  });

  it('rejects the empty name', () => {
    expect(topicNameProblem('')).toBe('topic name must not be empty');
  });

  it('allows 249 characters and rejects 250', () => {
    expect(MAX_TOPIC_NAME_LENGTH).toBe(249);
    expect(topicNameProblem('a'.repeat(249))).toBeUndefined();
    const problem = topicNameProblem('a'.repeat(250));
    expect(problem).toContain('250');
    expect(problem).toContain('249');
  });

  it('rejects "." and ".." but not other runs of dots', () => {
    expect(topicNameProblem('.')).toBe('topic name must not be "."');
    expect(topicNameProblem('..')).toBe('topic name must not be ".."');
    expect(topicNameProblem('...')).toBeUndefined();
  });

  it('rejects full-width parentheses and a space', () => {
    const problem = topicNameProblem('fincx.repayment.status （wpk-reactor-web）');
    expect(problem).toMatch(/ASCII letters, digits/);
  });

  it('rejects each character outside the legal set', () => {
    for (const c of [' ', '/', '\\', ':', '*', '?', '（', 'é', '\n', '+', '#', ',', '$']) {
      expect(topicNameProblem(`ab${c}cd`), JSON.stringify(c)).toBeDefined();
    }
  });

  it('reports the length problem before the character problem', () => {
    expect(topicNameProblem('é'.repeat(250))).toMatch(/250 characters/);
  });
});

describe('isInternalTopic', () => {
  it('flags every name starting with two underscores', () => {
    expect(isInternalTopic('__consumer_offsets')).toBe(true);
    expect(isInternalTopic('__transaction_state')).toBe(true);
    expect(isInternalTopic('__anything')).toBe(true);
    expect(isInternalTopic('__')).toBe(true);
  });

  it('does not flag ordinary names', () => {
    expect(isInternalTopic('_consumer_offsets')).toBe(false);
    expect(isInternalTopic('orders__v1')).toBe(false);
    expect(isInternalTopic('orders')).toBe(false);
    expect(isInternalTopic('')).toBe(false);
  });
});

describe('topicAllowList', () => {
  it('allows every topic when there are no patterns', () => {
    const allow = topicAllowList([]);
    expect(allow('orders')).toBe(true);
    expect(allow('anything.at_all-1')).toBe(true);
  });

  it('matches literal patterns exactly', () => {
    const allow = topicAllowList(['orders']);
    expect(allow('orders')).toBe(true);
    expect(allow('orders2')).toBe(false);
    expect(allow('xorders')).toBe(false);
    expect(allow('Orders')).toBe(false);
  });

  it('treats "*" as any run of characters, including none', () => {
    const allow = topicAllowList(['orders.*']);
    expect(allow('orders.')).toBe(true);
    expect(allow('orders.eu')).toBe(true);
    expect(allow('orders.eu.west')).toBe(true);
    expect(allow('orders')).toBe(false);
    expect(allow('payments.eu')).toBe(false);
    expect(topicAllowList(['*'])('whatever')).toBe(true);
    expect(topicAllowList(['a*z'])('az')).toBe(true);
    expect(topicAllowList(['a*z'])('a-b-z')).toBe(true);
    expect(topicAllowList(['a*z'])('a-b-zz-y')).toBe(false);
  });

  it('treats "?" as exactly one character', () => {
    const allow = topicAllowList(['log-?']);
    expect(allow('log-1')).toBe(true);
    expect(allow('log-a')).toBe(true);
    expect(allow('log-')).toBe(false);
    expect(allow('log-12')).toBe(false);
  });

  it('does not treat "." as a wildcard', () => {
    const allow = topicAllowList(['a.b']);
    expect(allow('a.b')).toBe(true);
    expect(allow('axb')).toBe(false);
    expect(allow('a_b')).toBe(false);
  });

  it('treats regular-expression metacharacters literally', () => {
    for (const pattern of ['a+b', 'a(b)', 'a[b]', 'a{2}', 'a|b', '^a$', 'a\\b', 'a-b']) {
      const allow = topicAllowList([pattern]);
      expect(allow(pattern), pattern).toBe(true);
    }
    expect(topicAllowList(['a+b'])('aab')).toBe(false);
    expect(topicAllowList(['a|b'])('a')).toBe(false);
    expect(topicAllowList(['a|b'])('b')).toBe(false);
    expect(topicAllowList(['a{2}'])('aa')).toBe(false);
    expect(topicAllowList(['a[b]'])('ab')).toBe(false);
    expect(topicAllowList(['a(b)'])('ab')).toBe(false);
  });

  it('allows a topic matched by any one of several patterns', () => {
    const allow = topicAllowList(['orders', 'payments.*', 'log-?']);
    expect(allow('orders')).toBe(true);
    expect(allow('payments.eu')).toBe(true);
    expect(allow('log-7')).toBe(true);
    expect(allow('audit')).toBe(false);
  });
});
