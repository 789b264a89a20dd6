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

/** What a composition root does to each SDK client it builds: trace its calls, or nothing. */
export type CaptureClient = <Client extends object>(client: Client) => Client;

/**
 * An SDK client module and its client, loaded by the first call rather than at cold start (the
 * functions that hold one rarely use it), then shared by every later call of the container; a
 * failed load is forgotten, so the next call loads again. Each client is passed to `capture`
 * (the platform's tracing, when TALLY_TRACING is on).
 */
export function lazySdkClient<Module, Client extends object>(
  place: SdkClientPlace,
  load: () => Promise<Module>,
  create: (module: Module, config: ReturnType<typeof sdkClientConfig>) => Client,
  capture: CaptureClient,
): () => Promise<{ readonly module: Module; readonly client: Client }> {
  let loaded: Promise<{ readonly module: Module; readonly client: Client }> | undefined;
  return () => {
    loaded ??= (async () => {
      const module = await load();
      return { module, client: capture(create(module, sdkClientConfig(place))) };
    })().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };
}
