import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { NotifyOutcome } from '../../core/notify/group-notifier.js';

// A notifier runs after the work it reports on, and must never fail it: a store or EventBridge
// that does not answer is logged and counted (NotificationsFailed, alarmed in serverless.yml),
// and the next run decides and sends again, since nothing was moved on.

const metrics = {
  reconcile: new Metrics({ namespace: 'Tally', serviceName: 'reconcile' }),
  audit: new Metrics({ namespace: 'Tally', serviceName: 'audit' }),
};

export async function notifySafely(
  service: keyof typeof metrics,
  work: () => Promise<NotifyOutcome>,
  log: (level: 'warn' | 'error', message: string, extra?: object) => void,
): Promise<NotifyOutcome> {
  let outcome: NotifyOutcome;
  try {
    outcome = await work();
  } catch (error) {
    log('error', 'notifications not sent; the next run tries again', {
      service,
      error: error instanceof Error ? { name: error.name, message: error.message } : String(error),
    });
    outcome = { sent: 0, failed: 1, conflicts: 0 };
  }
  if (outcome.failed > 0) log('warn', 'notifications failed', { service, ...outcome });
  const emit = (name: string, value: number) => {
    const metric = metrics[service].singleMetric();
    metric.addMetric(name, MetricUnit.Count, value);
  };
  emit('NotificationsSent', outcome.sent);
  emit('NotificationsFailed', outcome.failed);
  return outcome;
}
