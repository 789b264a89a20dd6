// One JSON line per event, CloudWatch-friendly. Record keys and values are never passed here.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const threshold = ORDER[(process.env.LOG_LEVEL?.toLowerCase() as LogLevel) ?? 'info'] ?? 20;

export function log(level: LogLevel, message: string, extra: object = {}): void {
  if (ORDER[level] < threshold) return;
  const line = JSON.stringify({
    level: level.toUpperCase(),
    time: new Date().toISOString(),
    message,
    ...extra,
  });
  if (level === 'error' || level === 'warn') process.stderr.write(`${line}\n`);
  else process.stdout.write(`${line}\n`);
}
