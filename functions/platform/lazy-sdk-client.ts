import { lazyRuntime } from './lazy-runtime.js';
import { tracing } from './tracing.js';

/** Where an AWS SDK client sends: AWS in `region`, or a local API (the `npm start` stack's). */
export interface SdkClientPlace {
  readonly region: string;
  /** A local endpoint instead of AWS; it checks no signature, so dummy credentials do. */
  readonly endpoint: string | undefined;
}

/** An SDK client's region and, locally, its endpoint with dummy credentials. */
export function sdkClientWhere(place: SdkClientPlace) {
  return {
    region: place.region,
    ...(place.endpoint && {
      endpoint: place.endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  };
}

/**
 * The settings of an SDK client on a request's path: two attempts of at most 3 s to connect and
 * 5 s to answer each (a stalled service turns into an error, not a hang: without
 * throwOnRequestTimeout the SDK only warns and keeps waiting), and where it sends.
 */
export function sdkClientConfig(place: SdkClientPlace) {
  return {
    ...sdkClientWhere(place),
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 3000, requestTimeout: 5000, throwOnRequestTimeout: true },
  };
}

/**
 * An SDK client module and its client, loaded by the first call rather than at cold start (the
 * functions that hold one rarely use it), then shared by every later call of the container;
 * its calls are traced when tracing is on (TALLY_TRACING).
 */
export function lazySdkClient<Module, Client extends object>(
  place: SdkClientPlace,
  load: () => Promise<Module>,
  create: (module: Module, config: ReturnType<typeof sdkClientConfig>) => Client,
): () => Promise<{ readonly module: Module; readonly client: Client }> {
  return lazyRuntime(async () => {
    const module = await load();
    return { module, client: tracing.captureClient(create(module, sdkClientConfig(place))) };
  });
}
