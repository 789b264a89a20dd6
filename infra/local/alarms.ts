import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

// CloudWatch alarms have no local stand-in, so this evaluates serverless.yml's own alarm
// definitions (the one place their metrics, thresholds and missing-data rules are written) over
// the datapoints a local run emitted: its EMF documents, and Lambda's Errors as the caller counts
// them. One call of `period` is one alarm period. Only what serverless.yml uses is modelled: one
// evaluation period of one datapoint, a Metrics Insights `SELECT F(metric) FROM SCHEMA(...)` or a
// plain metric with a statistic; anything else is refused, not approximated.

const SERVERLESS_YML = fileURLToPath(new URL('../../serverless.yml', import.meta.url));

export type AlarmState = 'INSUFFICIENT_DATA' | 'OK' | 'ALARM';

export interface Datapoint {
  readonly namespace: string;
  readonly metric: string;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly value: number;
}

type Aggregate = 'MAX' | 'MIN' | 'SUM' | 'AVG' | 'COUNT';

export interface AlarmDefinition {
  /** The alarm's logical id in serverless.yml. */
  readonly id: string;
  readonly namespace: string;
  readonly metric: string;
  /** Insights: the exact dimension names (SCHEMA); a plain metric: its dimensions and values. */
  readonly dimensions: readonly string[] | Readonly<Record<string, string>>;
  readonly aggregate: Aggregate;
  readonly comparison: string;
  readonly threshold: number;
  readonly treatMissingData: string;
}

const STATISTIC: Record<string, Aggregate> = {
  Maximum: 'MAX',
  Minimum: 'MIN',
  Sum: 'SUM',
  Average: 'AVG',
  SampleCount: 'COUNT',
};

const unquote = (name: string) => name.trim().replace(/^"(.*)"$/, '$1');

/** `SELECT F(metric) FROM SCHEMA("Namespace", dim, …)`, the only query form modelled. */
function parseInsights(id: string, query: string) {
  const match = /^SELECT (MAX|MIN|SUM|AVG|COUNT)\((\w+)\) FROM SCHEMA\(([^)]*)\)$/.exec(
    query.trim(),
  );
  if (!match) throw new Error(`alarm ${id}: query not modelled locally: ${query}`);
  const [namespace = '', ...dimensions] = (match[3] as string).split(',').map(unquote);
  return { aggregate: match[1] as Aggregate, metric: match[2] as string, namespace, dimensions };
}

/** `${self:service}` and `${sls:stage}`, as Serverless resolves them in alarm names and values. */
function resolver(service: string, stage: string) {
  return (text: string) =>
    text.replace(/\$\{self:service\}/g, service).replace(/\$\{sls:stage\}/g, stage);
}

type Resource = { Type?: string; Properties?: Record<string, unknown> };

/** The CloudWatch alarms of serverless.yml's resources. */
export function readAlarms(stage = 'local'): AlarmDefinition[] {
  const config = parse(readFileSync(SERVERLESS_YML, 'utf8')) as {
    service: string;
    resources: Array<string | { Resources?: Record<string, Resource> }>;
  };
  const resolve = resolver(config.service, stage);
  const alarms: AlarmDefinition[] = [];
  for (const fragment of config.resources) {
    if (typeof fragment === 'string') continue; // ${file(…)}: the tables
    for (const [id, resource] of Object.entries(fragment.Resources ?? {})) {
      if (resource.Type !== 'AWS::CloudWatch::Alarm') continue;
      const p = resource.Properties ?? {};
      if (Number(p.EvaluationPeriods) !== 1 || Number(p.DatapointsToAlarm ?? 1) !== 1) {
        throw new Error(`alarm ${id}: only one evaluation period of one datapoint is modelled`);
      }
      const common = {
        id,
        comparison: String(p.ComparisonOperator),
        threshold: Number(p.Threshold),
        treatMissingData: String(p.TreatMissingData ?? 'missing'),
      };
      const queries = p.Metrics as Array<{ Expression?: string }> | undefined;
      if (queries) {
        if (queries.length !== 1 || !queries[0]?.Expression) {
          throw new Error(`alarm ${id}: only one Metrics Insights query is modelled`);
        }
        alarms.push({ ...common, ...parseInsights(id, queries[0].Expression) });
        continue;
      }
      const aggregate = STATISTIC[String(p.Statistic)];
      if (!aggregate) throw new Error(`alarm ${id}: statistic ${String(p.Statistic)} not modelled`);
      const dimensions = (p.Dimensions as Array<{ Name: string; Value: string }> | undefined) ?? [];
      alarms.push({
        ...common,
        namespace: String(p.Namespace),
        metric: String(p.MetricName),
        aggregate,
        dimensions: Object.fromEntries(dimensions.map((d) => [d.Name, resolve(d.Value)])),
      });
    }
  }
  return alarms;
}

type EmfDocument = Record<string, unknown> & {
  _aws: {
    CloudWatchMetrics: Array<{
      Namespace: string;
      Dimensions: string[][];
      Metrics: Array<{ Name: string }>;
    }>;
  };
};

/** The datapoints of EMF documents (one per metric, dimension set and value). */
export function emfDatapoints(documents: readonly object[]): Datapoint[] {
  const points: Datapoint[] = [];
  for (const doc of documents as EmfDocument[]) {
    for (const directive of doc._aws.CloudWatchMetrics) {
      for (const set of directive.Dimensions) {
        const dimensions = Object.fromEntries(set.map((name) => [name, String(doc[name])]));
        for (const { Name } of directive.Metrics) {
          const raw = doc[Name];
          for (const value of Array.isArray(raw) ? raw : [raw]) {
            points.push({
              namespace: directive.Namespace,
              metric: Name,
              dimensions,
              value: Number(value),
            });
          }
        }
      }
    }
  }
  return points;
}

function matches(alarm: AlarmDefinition, point: Datapoint): boolean {
  if (point.namespace !== alarm.namespace || point.metric !== alarm.metric) return false;
  const names = Object.keys(point.dimensions).sort();
  if (Array.isArray(alarm.dimensions)) {
    // SCHEMA: exactly these dimension names, no more and no fewer.
    return JSON.stringify(names) === JSON.stringify([...alarm.dimensions].sort());
  }
  const wanted = alarm.dimensions as Readonly<Record<string, string>>;
  return (
    JSON.stringify(names) === JSON.stringify(Object.keys(wanted).sort()) &&
    names.every((name) => point.dimensions[name] === wanted[name])
  );
}

function aggregate(kind: Aggregate, values: readonly number[]): number {
  if (kind === 'MAX') return Math.max(...values);
  if (kind === 'MIN') return Math.min(...values);
  if (kind === 'COUNT') return values.length;
  const sum = values.reduce((a, b) => a + b, 0);
  return kind === 'SUM' ? sum : sum / values.length;
}

function breaches(alarm: AlarmDefinition, value: number): boolean {
  switch (alarm.comparison) {
    case 'GreaterThanThreshold':
      return value > alarm.threshold;
    case 'GreaterThanOrEqualToThreshold':
      return value >= alarm.threshold;
    case 'LessThanThreshold':
      return value < alarm.threshold;
    case 'LessThanOrEqualToThreshold':
      return value <= alarm.threshold;
    default:
      throw new Error(`alarm ${alarm.id}: comparison ${alarm.comparison} not modelled`);
  }
}

export interface AlarmTransition {
  readonly alarm: string;
  readonly from: AlarmState;
  readonly to: AlarmState;
}

/** Alarms that start, as in CloudWatch, in INSUFFICIENT_DATA, and change state period by period. */
export function createAlarmEvaluator(alarms: readonly AlarmDefinition[] = readAlarms()) {
  const states = new Map<string, AlarmState>(alarms.map((a) => [a.id, 'INSUFFICIENT_DATA']));
  return {
    state: (id: string) => states.get(id),
    /** Evaluates one period's datapoints; returns the state changes it caused. */
    period(points: readonly Datapoint[]): AlarmTransition[] {
      const transitions: AlarmTransition[] = [];
      for (const alarm of alarms) {
        const from = states.get(alarm.id) as AlarmState;
        const values = points.filter((p) => matches(alarm, p)).map((p) => p.value);
        let to: AlarmState = from;
        if (values.length > 0)
          to = breaches(alarm, aggregate(alarm.aggregate, values)) ? 'ALARM' : 'OK';
        else if (alarm.treatMissingData === 'notBreaching') to = 'OK';
        else if (alarm.treatMissingData === 'breaching') to = 'ALARM';
        else if (alarm.treatMissingData === 'missing') to = 'INSUFFICIENT_DATA';
        if (to !== from) {
          states.set(alarm.id, to);
          transitions.push({ alarm: alarm.id, from, to });
        }
      }
      return transitions;
    },
  };
}
