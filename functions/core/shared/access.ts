import { ForbiddenError, InvalidInputError } from './errors.js';
import { isPlainObject } from './input-checks.js';
import { topicAllowList } from './topic-names.js';

// Who may do what: every HTTP route needs a scope; publishing also needs the topic to be in the
// caller's own allow-list. `admin` includes every other scope.

export const SCOPES = ['read', 'publish', 'receipts', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export interface Caller {
  readonly id: string;
  readonly scopes: ReadonlySet<Scope>;
  /** Whether this caller may publish to a topic (its own allow-list; `*` patterns). */
  readonly mayPublishTo: (topic: string) => boolean;
}

/** A scope as tokens carry it: `publish` or `tally/publish`. */
function scopeOf(text: string): Scope | undefined {
  const name = text.startsWith('tally/') ? text.slice('tally/'.length) : text;
  return (SCOPES as readonly string[]).includes(name) ? (name as Scope) : undefined;
}

export function caller(id: string, scopes: readonly string[], topics: readonly string[]): Caller {
  return {
    id,
    scopes: new Set(scopes.map(scopeOf).filter((s): s is Scope => s !== undefined)),
    // An empty list allows nothing (unlike the API-wide list, where empty means any topic).
    mayPublishTo: topics.length === 0 ? () => false : topicAllowList(topics),
  };
}

/** Refuses (403) a caller without `needed` (or admin). */
export function requireScope(who: Caller, needed: Scope, field = 'Authorization'): void {
  if (!who.scopes.has(needed) && !who.scopes.has('admin')) {
    throw new ForbiddenError(`${field}: ${who.id} lacks the ${needed} scope this route needs`, {
      field,
    });
  }
}

/** Refuses (403) a topic outside the caller's own allow-list. */
export function requirePublishTo(who: Caller, topic: string): void {
  if (!who.mayPublishTo(topic)) {
    throw new ForbiddenError(`topic_name: ${who.id} may not publish to ${topic}`, {
      field: 'topic_name',
    });
  }
}

/**
 * Bearer tokens from configuration (local use):
 * `{"<token>": {"caller": "alice", "scopes": ["publish"], "topics": ["orders*"]}}`.
 */
export function parseTokens(json: string, name: string): Map<string, Caller> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new InvalidInputError(`${name}: not JSON`, { field: name });
  }
  if (!isPlainObject(parsed)) {
    throw new InvalidInputError(`${name}: an object of token → {caller, scopes, topics}`, {
      field: name,
    });
  }
  const tokens = new Map<string, Caller>();
  for (const [token, entry] of Object.entries(parsed)) {
    // An entry that is not an object (null, a string) fails the check below, not a TypeError.
    const e = (isPlainObject(entry) ? entry : {}) as {
      caller?: unknown;
      scopes?: unknown;
      topics?: unknown;
    };
    const valid =
      token.length >= 16 &&
      typeof e.caller === 'string' &&
      Array.isArray(e.scopes) &&
      e.scopes.every((s) => typeof s === 'string' && scopeOf(s) !== undefined) &&
      (e.topics === undefined ||
        (Array.isArray(e.topics) && e.topics.every((t) => typeof t === 'string')));
    if (!valid) {
      throw new InvalidInputError(
        `${name}: each token (16+ characters) needs {caller, scopes: [${SCOPES.join('|')}], topics?: [patterns]}`,
        { field: name },
      );
    }
    tokens.set(
      token,
      caller(e.caller as string, e.scopes as string[], (e.topics as string[]) ?? ['*']),
    );
  }
  return tokens;
}
