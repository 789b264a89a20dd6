import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const SERVERLESS_YML = fileURLToPath(new URL('../../serverless.yml', import.meta.url));
const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
/** Characters of a scheduled function's answer `npm start` prints. */
const ANSWER_SHOWN = 400;

export interface Schedule {
  readonly functionName: string;
  readonly everyMs: number;
  /** What EventBridge sends instead of the scheduled event (serverless.yml `input`). */
  readonly input?: Record<string, string>;
}

/** `${env:NAME, 'default'}` as Serverless resolves it, for the schedule expressions we use. */
function resolveEnv(value: string, env: NodeJS.ProcessEnv): string {
  return value.replace(
    /\$\{env:(\w+), '([^']*)'\}/g,
    (_, name: string, fallback: string) => env[name] ?? fallback,
  );
}

/** `${self:custom.a.b}` → serverless.yml's custom.a.b (itself maybe an `${env:…}`). */
function resolveCustom(value: string, custom: Record<string, unknown>): string {
  return value.replace(/\$\{self:custom\.([\w.]+)\}/g, (whole, path: string) => {
    const found = path
      .split('.')
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], custom);
    return typeof found === 'string' ? found : whole;
  });
}

/** `rate(N unit)` → milliseconds; undefined for what we do not fire locally (cron). */
export function rateMs(expression: string): number | undefined {
  const match = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression.trim());
  if (!match) return undefined;
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number);
}

/**
 * The `schedule` events of serverless.yml, per function: those enabled in AWS. `enabled` is read
 * unresolved, so only a literal `false` disables one; serverless.yml's per-stage expression turns
 * serverless-offline's own scheduler off for stage local, where this module is the one scheduler.
 */
export function readSchedules(env: NodeJS.ProcessEnv = process.env, stage = 'local'): Schedule[] {
  const config = parse(readFileSync(SERVERLESS_YML, 'utf8')) as {
    service: string;
    custom?: Record<string, unknown>;
    functions: Record<
      string,
      {
        events?: Array<{
          schedule?: { rate: string; enabled?: boolean; input?: Record<string, string> };
        }>;
      }
    >;
  };
  const schedules: Schedule[] = [];
  for (const [name, fn] of Object.entries(config.functions)) {
    for (const event of fn.events ?? []) {
      if (!event.schedule || event.schedule.enabled === false) continue;
      const everyMs = rateMs(resolveEnv(event.schedule.rate, env));
      if (everyMs === undefined) continue;
      const functionName = `${config.service}-${stage}-${name}`;
      const { input } = event.schedule;
      // A schedule with `input` sends it instead of the scheduled event, as EventBridge does.
      schedules.push(
        input === undefined
          ? { functionName, everyMs }
          : {
              functionName,
              everyMs,
              input: Object.fromEntries(
                Object.entries(input).map(([key, value]) => [
                  key,
                  resolveEnv(resolveCustom(value, config.custom ?? {}), env),
                ]),
              ),
            },
      );
    }
  }
  return schedules;
}

/**
 * Fires each schedule on its rate against serverless-offline's Lambda invoke endpoint, with the
 * event EventBridge would send, as EventBridge does in AWS.
 */
export function startSchedules(lambdaUrl: string, log: (line: string) => void, env = process.env) {
  const timers = readSchedules(env).map((schedule) =>
    setInterval(async () => {
      const event = schedule.input ?? {
        version: '0',
        id: crypto.randomUUID(),
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        time: new Date().toISOString(),
        resources: [],
        detail: {},
      };
      try {
        const response = await fetch(
          `${lambdaUrl}/2015-03-31/functions/${schedule.functionName}/invocations`,
          {
            method: 'POST',
            body: JSON.stringify(event),
          },
        );
        // What the function returned, shortened: the canary's figures, reconcile's counts.
        const answer = (await response.text()).replace(/\s+/g, ' ');
        const shown = answer.length > ANSWER_SHOWN ? `${answer.slice(0, ANSWER_SHOWN)}…` : answer;
        log(`schedule ${schedule.functionName}: ${response.status} ${shown}`);
      } catch (error) {
        log(`schedule ${schedule.functionName}: ${String(error)}`);
      }
    }, schedule.everyMs),
  );
  for (const timer of timers) timer.unref();
  return { stop: () => timers.forEach(clearInterval), count: timers.length };
}
