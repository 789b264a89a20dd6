import { describe, expect, it } from 'vitest';
import {
  sameTopics,
  topicMoves,
  topicsRead,
} from '../../../../functions/core/reconcile/topic-index.js';

describe('the topic index of reconcile reports', () => {
  it("reads a report's topics sorted, each once", () => {
    const partitions = [{ topic: 'b' }, { topic: 'a' }, { topic: 'b' }];
    expect(topicsRead({ partitions })).toEqual(['a', 'b']);
    expect(topicsRead({ partitions: [] })).toEqual([]);
  });

  it('tells a changed set from the same one', () => {
    expect(sameTopics(['a', 'b'], ['a', 'b'])).toBe(true);
    expect(sameTopics(['a', 'b'], ['a'])).toBe(false);
    expect(sameTopics(['a'], ['b'])).toBe(false);
    expect(sameTopics([], [])).toBe(true);
  });

  it('writes every topic read now again and removes only those no longer read', () => {
    expect(topicMoves(['a', 'b'], ['b', 'c'])).toEqual({ put: ['b', 'c'], remove: ['a'] });
    expect(topicMoves([], ['a'])).toEqual({ put: ['a'], remove: [] });
    expect(topicMoves(['a'], [])).toEqual({ put: [], remove: ['a'] });
  });
});
