import {
  type BurrowAnswer,
  type BurrowRequest,
  clientProfile,
  clusterDetail,
  notFound,
} from './burrow-answers.js';

// Burrow's read-only configuration routes (its httpserver/config.go and the GET of
// /v3/admin/loglevel), answered from Tally's own settings in Burrow's shapes: one cluster, one
// consumer module reading it (named as the cluster), one storage and one evaluator module
// (`default`), no notifier modules (Tally's notifications are not Burrow's notifiers). Fields
// Tally has no setting for carry Go's zero values, as Burrow answers an unset key.

export interface BurrowSettings {
  /** The name a Burrow client knows the cluster by. */
  readonly cluster: string;
  readonly servers: readonly string[];
  /** Observations kept per partition (Burrow's storage `intervals`). */
  readonly intervals: number;
  /** How long a gone group's reports and history are kept, seconds (`expire-group`). */
  readonly expireGroupSeconds: number;
  /** Tally's log level (platform/log.ts), e.g. INFO. */
  readonly logLevel: string;
}

const STORAGE = 'default';
const EVALUATOR = 'default';

/** Tally's level as zap names it (Burrow's logger): TRACE → debug, CRITICAL/SILENT → fatal. */
export function zapLevel(level: string): string {
  const upper = level.toUpperCase();
  if (upper === 'TRACE' || upper === 'DEBUG') return 'debug';
  if (upper === 'INFO' || upper === 'WARN' || upper === 'ERROR') return upper.toLowerCase();
  return 'fatal';
}

const ok = (request: BurrowRequest, message: string, fields: object): BurrowAnswer => ({
  statusCode: 200,
  body: { error: false, message, ...fields, request },
});

const moduleList = (request: BurrowRequest, coordinator: string, modules: string[]) =>
  ok(request, 'module list returned', { coordinator, modules });

const moduleDetail = (request: BurrowRequest, kind: string, module: object) =>
  ok(request, `${kind} module detail returned`, { module });

/** GET /v3/admin/loglevel. */
export function logLevel(request: BurrowRequest, settings: BurrowSettings): BurrowAnswer {
  return ok(request, 'log level returned', { level: zapLevel(settings.logLevel) });
}

/**
 * GET /v3/config and below: `parts` are the segments after /v3/config. A module that is not
 * there answers 404 with Burrow's `<kind> module not found`.
 */
export function configAnswer(
  request: BurrowRequest,
  parts: readonly string[],
  settings: BurrowSettings,
  isCluster: (name: string) => boolean,
): BurrowAnswer {
  const [kind, name, ...rest] = parts;
  if (kind === undefined) return mainConfig(request, settings);
  if (rest.length > 0) return notFound(request, 'invalid request type');
  const modules: Record<string, string[]> = {
    storage: [STORAGE],
    evaluator: [EVALUATOR],
    cluster: [settings.cluster],
    consumer: [settings.cluster],
    notifier: [],
  };
  const names = modules[kind];
  if (names === undefined) return notFound(request, 'invalid request type');
  if (name === undefined) return moduleList(request, kind, names);
  const known = kind === 'cluster' || kind === 'consumer' ? isCluster(name) : names.includes(name);
  if (!known) return notFound(request, `${kind} module not found`);
  if (kind === 'cluster') return clusterDetail(request, settings.servers);
  if (kind === 'storage') {
    return moduleDetail(request, kind, {
      'class-name': 'dynamodb',
      intervals: settings.intervals,
      'min-distance': 0,
      'group-whitelist': '',
      'expire-group': settings.expireGroupSeconds,
    });
  }
  if (kind === 'evaluator') {
    // Statuses are judged by each reconcile run and stored: nothing is cached to expire.
    return moduleDetail(request, kind, { 'class-name': 'reconcile', 'expire-cache': 0 });
  }
  return moduleDetail(request, kind, {
    'class-name': 'kafka',
    cluster: settings.cluster,
    servers: settings.servers,
    'group-whitelist': '',
    'zookeeper-path': '',
    'zookeeper-timeout': 0,
    'client-profile': clientProfile(),
    // Committed offsets are read with OffsetFetch, not from __consumer_offsets.
    'offsets-topic': '',
    'start-latest': false,
  });
}

function mainConfig(request: BurrowRequest, settings: BurrowSettings): BurrowAnswer {
  return ok(request, 'main config returned', {
    general: { pidfile: '', 'stdout-logfile': '', 'access-control-allow-origin': '' },
    logging: {
      filename: '',
      'max-size': 0,
      'max-backups': 0,
      'max-age': 0,
      'use-local-time': false,
      'use-compression': false,
      level: zapLevel(settings.logLevel),
    },
    zookeeper: { servers: [], timeout: 0, 'root-path': '' },
    httpserver: {},
  });
}
