import type { NotifyRules } from '../core/notify/rules.js';
import { ConfigurationError } from '../core/shared/errors.js';

// The notifier's settings, parsed from the environment the composition root passes in (reconcile
// and audit read the same names). Kept beside the rules rather than in platform/config.ts while
// that file has another owner; it follows the same rules: validated once, failing the cold start
// with the variable's name.

type Env = Readonly<Record<string, string | undefined>>;

export interface NotifyConfig {
  /** The EventBridge bus events go to; undefined: notifications are off. */
  readonly eventBus: string | undefined;
  /** A local EventBridge API (the `npm start` stack's) instead of AWS. */
  readonly endpoint: string | undefined;
  readonly rules: NotifyRules;
}

const optional = (env: Env, name: string) => env[name]?.trim() || undefined;

function flag(env: Env, name: string, fallback: boolean): boolean {
  const text = optional(env, name)?.toLowerCase();
  if (text === undefined) return fallback;
  if (text !== 'true' && text !== 'false') {
    throw new ConfigurationError(`${name} must be true or false, got "${text}"`, { field: name });
  }
  return text === 'true';
}

function pattern(env: Env, name: string): RegExp | undefined {
  const text = optional(env, name);
  if (text === undefined) return undefined;
  try {
    return new RegExp(text);
  } catch (cause) {
    throw new ConfigurationError(`${name} is not a valid regular expression: "${text}"`, {
      field: name,
      cause,
    });
  }
}

export function loadNotifyConfig(env: Env): NotifyConfig {
  const threshold = (optional(env, 'TALLY_NOTIFY_THRESHOLD') ?? 'WARN').toUpperCase();
  if (threshold !== 'WARN' && threshold !== 'ERR') {
    throw new ConfigurationError(`TALLY_NOTIFY_THRESHOLD must be WARN or ERR, got "${threshold}"`, {
      field: 'TALLY_NOTIFY_THRESHOLD',
    });
  }
  const intervalText = optional(env, 'TALLY_NOTIFY_INTERVAL_SECONDS') ?? '3600';
  const interval = Number(intervalText);
  if (!Number.isSafeInteger(interval) || interval < 0 || interval > 31_536_000) {
    throw new ConfigurationError(
      `TALLY_NOTIFY_INTERVAL_SECONDS must be an integer from 0 to 31536000, got "${intervalText}"`,
      { field: 'TALLY_NOTIFY_INTERVAL_SECONDS' },
    );
  }
  return {
    eventBus: optional(env, 'TALLY_NOTIFY_EVENT_BUS'),
    endpoint: optional(env, 'TALLY_EVENTBRIDGE_ENDPOINT'),
    rules: {
      threshold,
      intervalMs: interval * 1000,
      sendOnce: flag(env, 'TALLY_NOTIFY_SEND_ONCE', false),
      sendClose: flag(env, 'TALLY_NOTIFY_SEND_CLOSE', true),
      allow: pattern(env, 'TALLY_NOTIFY_GROUP_ALLOWLIST'),
      deny: pattern(env, 'TALLY_NOTIFY_GROUP_DENYLIST'),
    },
  };
}
