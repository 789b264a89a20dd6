import type { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { EventSink, OutgoingEvent } from '../../core/notify/events.js';
import { type CaptureClient, lazySdkClient } from '../aws/lazy-sdk-client.js';

/** PutEvents takes at most 10 entries a call. */
const ENTRIES_PER_CALL = 10;

export interface EventSinkOptions {
  readonly region: string;
  /** Bus name or ARN. */
  readonly eventBus: string;
  /** A local EventBridge API (the `npm start` stack's) instead of AWS. */
  readonly endpoint: string | undefined;
  /** What the composition root does to the SDK client (its tracing). */
  readonly captureClient: CaptureClient;
  readonly log: (level: 'warn' | 'error', message: string, extra?: object) => void;
}

/**
 * Events to EventBridge with PutEvents. The SDK client is loaded by the first event, not at cold
 * start: most runs send none. Never rejects: an entry EventBridge refuses, or a call that fails,
 * is reported not accepted (and logged), so the caller keeps its state and the next run retries.
 */
export function createEventSink(options: EventSinkOptions): EventSink {
  const load = lazySdkClient(
    options,
    () => import('@aws-sdk/client-eventbridge'),
    (module, config) => new module.EventBridgeClient(config),
    options.captureClient,
  );
  const { log } = options;
  const put = async (events: readonly OutgoingEvent[]): Promise<boolean[]> => {
    try {
      const { client, module } = await load();
      const command: PutEventsCommand = new module.PutEventsCommand({
        Entries: events.map((event) => ({
          EventBusName: options.eventBus,
          Source: event.source,
          DetailType: event.detailType,
          Detail: JSON.stringify(event.detail),
        })),
      });
      const answer = await client.send(command);
      return events.map((_, i) => {
        const entry = answer.Entries?.[i];
        if (entry?.EventId && !entry.ErrorCode) return true;
        log('warn', 'EventBridge refused an event', {
          source: events[i]?.source,
          errorCode: entry?.ErrorCode,
          errorMessage: entry?.ErrorMessage,
        });
        return false;
      });
    } catch (error) {
      log('warn', 'EventBridge PutEvents failed', {
        events: events.length,
        error:
          error instanceof Error ? { name: error.name, message: error.message } : String(error),
      });
      return events.map(() => false);
    }
  };
  return {
    async send(events) {
      const accepted: boolean[] = [];
      for (let i = 0; i < events.length; i += ENTRIES_PER_CALL) {
        accepted.push(...(await put(events.slice(i, i + ENTRIES_PER_CALL))));
      }
      return accepted;
    },
  };
}
