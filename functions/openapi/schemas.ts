// The component schemas of Tally's OpenAPI document (document.ts): JSON Schema 2020-12, as the
// handlers write their bodies. Small shapes are closed (unevaluatedProperties: false), so a field
// a handler adds or drops fails the integration tests' check; large reports (reconcile, audit)
// close their top level and the parts clients read.

export type Schema = { readonly [keyword: string]: unknown };

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const closed = (properties: Record<string, Schema>, required: readonly string[]): Schema => ({
  type: 'object',
  properties,
  required,
  unevaluatedProperties: false,
});
const int: Schema = { type: 'integer' };
const nonNegative: Schema = { type: 'integer', minimum: 0 };
/** AWS Glue Schema Registry's SchemaVersionId (its API reference's pattern). */
const GLUE_VERSION_ID = '^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$';
const str: Schema = { type: 'string' };
const bool: Schema = { type: 'boolean' };
const dateTime: Schema = { type: 'string', format: 'date-time' };
const list = (items: Schema): Schema => ({ type: 'array', items });
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const counts: Schema = { type: 'object', additionalProperties: { type: 'number' } };
const outcomes = ['ACKED', 'FAILED', 'NOT_SENT', 'UNKNOWN', 'VOID'];

const errors: Record<string, Schema> = {
  Error: {
    ...closed(
      {
        error_code: { type: 'integer', description: 'HTTP status, or a Confluent code (40403)' },
        message: { type: 'string', description: 'names the field at fault on a 4xx' },
        retriable: bool,
        field: { type: 'string', description: 'the input field at fault' },
        outcome: { const: 'UNKNOWN', description: 'only when the function ran out of time' },
      },
      ['error_code', 'message', 'retriable'],
    ),
    description: "Every error Tally's middleware answers (platform/http.ts errorResponse).",
  },
};

const seq: Schema = { type: 'integer', minimum: 1 };
const recordFields = {
  partition_id: nullable(nonNegative),
  key: nullable(ref('RecordData')),
  value: nullable(ref('RecordData')),
  headers: list(ref('RecordHeader')),
  timestamp: nullable(dateTime),
};
const acked = {
  error_code: { const: 200 },
  cluster_id: str,
  topic_name: str,
  partition_id: nonNegative,
  offset: nonNegative,
  timestamp: dateTime,
  key: ref('DataSummary'),
  value: ref('DataSummary'),
  stream: str,
  seq,
};
const ackedRequired = ['error_code', 'cluster_id', 'topic_name', 'partition_id', 'offset'];
const failed = {
  error_code: int,
  message: str,
  outcome: { enum: ['FAILED', 'NOT_SENT', 'UNKNOWN', 'VOID'] },
  retriable: bool,
  stream: str,
  seq,
  partition_id: nonNegative,
};
const failedRequired = ['error_code', 'message', 'outcome', 'retriable', 'stream', 'seq'];
const rejected = { error_code: int, message: str, outcome: { const: 'REJECTED' }, retriable: bool };
const rejectedRequired = ['error_code', 'message', 'outcome', 'retriable'];
/** A batch answer's entry: the report with its entry's `id` first. */
const withId = (fields: Record<string, Schema>, required: string[]) =>
  closed({ id: str, ...fields }, ['id', ...required]);

const publish: Record<string, Schema> = {
  RecordData: {
    oneOf: [ref('PlainRecordData'), ref('SchemaRecordData')],
    description:
      'A key or value: bytes as given (BINARY, STRING, JSON), or serialized with a schema',
  },
  PlainRecordData: closed(
    {
      type: { enum: ['BINARY', 'STRING', 'JSON'] },
      data: {
        description: 'base64 for BINARY, text for STRING, any JSON for JSON; null: Kafka null',
      },
    },
    ['type', 'data'],
  ),
  SchemaRecordData: {
    ...closed(
      {
        type: {
          enum: ['AVRO', 'PROTOBUF', 'JSONSCHEMA'],
          description: 'only with an inline schema',
        },
        schema_id: {
          oneOf: [
            { type: 'integer', minimum: 0, maximum: 2_147_483_647 },
            {
              type: 'string',
              pattern: GLUE_VERSION_ID,
              description: 'AWS Glue: a schema version UUID',
            },
          ],
        },
        schema_version: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
        subject: { type: 'string', minLength: 1 },
        subject_name_strategy: { enum: ['TOPIC_NAME', 'RECORD_NAME', 'TOPIC_RECORD_NAME'] },
        schema: { type: 'string', minLength: 1, description: 'the schema itself, as text' },
        data: { description: 'the value as JSON, checked against the schema; null: Kafka null' },
      },
      ['data'],
    ),
    description:
      "Serialized with a schema from the registry (TALLY_SCHEMA_REGISTRY_URL), in Confluent's wire format: by schema_id (which must be registered under the subject, as REST Proxy checks); else schema_version of the subject; else an inline schema with its type; else the subject's latest version. The subject is `subject`, else the one subject_name_strategy names (TOPIC_NAME: <topic>-key / <topic>-value). A value its schema refuses is its record's 400; an id or subject the registry does not have, or an id not registered under the subject, 42207; a registry that does not answer, 503 (retriable, nothing sent). Without a registry every such key or value is REST Proxy's 422 'Error: 42206 : …'. With AWS Glue Schema Registry (TALLY_SCHEMA_REGISTRY=glue), in Glue's wire format: the subject is the Glue schema's name in TALLY_GLUE_REGISTRY_NAME, schema_id a schema version's UUID, and an inline schema must already be a version of it unless TALLY_GLUE_AUTO_REGISTER is on (docs/api.md).",
  },
  RecordHeader: {
    ...closed({ name: { type: 'string', minLength: 1 }, value: nullable(str) }, ['name']),
    description:
      "value: padded base64 (standard alphabet, '=' to a multiple of 4 characters), as REST Proxy reads it; a value that is not is that record's 400. null or absent writes a Kafka null header, as REST Proxy does",
  },
  ProduceRecord: {
    ...closed(recordFields, []),
    description: 'A Confluent REST Proxy v3 record; header values are base64.',
  },
  BatchRequest: closed(
    {
      entries: {
        ...list(
          closed({ id: { type: 'string', pattern: '^[0-9a-zA-Z_-]{1,80}$' }, ...recordFields }, [
            'id',
          ]),
        ),
        minItems: 1,
      },
    },
    ['entries'],
  ),
  DataSummary: closed(
    {
      type: { enum: ['BINARY', 'STRING', 'JSON', 'AVRO', 'PROTOBUF', 'JSONSCHEMA'] },
      subject: { type: 'string', description: "the schema's subject (REST Proxy's report)" },
      schema_id: {
        oneOf: [nonNegative, { type: 'string', pattern: GLUE_VERSION_ID }],
        description: 'the schema it was serialized with (AWS Glue: the version UUID)',
      },
      schema_version: {
        type: 'integer',
        minimum: 1,
        description: "the schema's version under the subject",
      },
      size: int,
    },
    ['type', 'size'],
  ),
  AckedReport: closed(acked, [...ackedRequired, 'timestamp', 'stream', 'seq']),
  FailedReport: closed(failed, failedRequired),
  RejectedReport: closed(rejected, rejectedRequired),
  ProduceReport: {
    oneOf: [ref('AckedReport'), ref('FailedReport'), ref('RejectedReport')],
    description: "One record's report: where it landed, or what happened to it.",
  },
  BatchResponse: closed(
    {
      successes: list(withId(acked, [...ackedRequired, 'timestamp', 'stream', 'seq'])),
      failures: list({
        oneOf: [withId(failed, failedRequired), withId(rejected, rejectedRequired)],
      }),
    },
    ['successes', 'failures'],
  ),
  V2Request: closed(
    {
      records: {
        ...list(
          closed(
            {
              key: { description: 'JSON (json format) or base64 (binary format)' },
              value: { description: 'JSON (json format) or base64 (binary format)' },
              partition: nullable(nonNegative),
              headers: list(closed({ key: { type: 'string', minLength: 1 }, value: str }, ['key'])),
              timestamp: {
                ...nullable(nonNegative),
                description: 'epoch milliseconds, as the Strimzi bridge takes it (0.30.0)',
              },
            },
            [],
          ),
        ),
        minItems: 1,
      },
      key_schema: {},
      key_schema_id: {},
      value_schema: {},
      value_schema_id: {},
    },
    ['records'],
  ),
  V2Response: closed(
    {
      key_schema_id: { type: 'null' },
      value_schema_id: { type: 'null' },
      offsets: list({
        oneOf: [
          closed({ partition: nonNegative, offset: nonNegative, stream: str, seq: int }, [
            'partition',
            'offset',
            'stream',
            'seq',
          ]),
          closed(
            {
              partition: { type: 'null' },
              offset: { type: 'null' },
              error_code: int,
              error: str,
              outcome: { enum: ['FAILED', 'NOT_SENT', 'UNKNOWN', 'VOID', 'REJECTED'] },
              retriable: bool,
              stream: str,
              seq: int,
              partition_id: nonNegative,
            },
            ['partition', 'offset', 'error_code', 'error', 'outcome', 'retriable'],
          ),
        ],
      }),
    },
    ['key_schema_id', 'value_schema_id', 'offsets'],
  ),
  Cluster: {
    ...closed(
      {
        kind: { const: 'KafkaCluster' },
        metadata: closed({ self: str, resource_name: str }, ['self', 'resource_name']),
        cluster_id: str,
        acls: ref('Related'),
        brokers: ref('Related'),
        broker_configs: ref('Related'),
        consumer_groups: ref('Related'),
        topics: ref('Related'),
        partition_reassignments: ref('Related'),
      },
      [
        'kind',
        'metadata',
        'cluster_id',
        'acls',
        'brokers',
        'broker_configs',
        'consumer_groups',
        'topics',
        'partition_reassignments',
      ],
    ),
    description:
      "A cluster with the links REST Proxy v3 clients expect of one. Tally serves none of the linked collections (they answer 404); they are REST Proxy's paths under the cluster's self link.",
  },
  Related: closed({ related: str }, ['related']),
  ClusterList: closed(
    {
      kind: { const: 'KafkaClusterList' },
      metadata: closed({ self: str, next: { type: 'null' } }, ['self', 'next']),
      data: list(ref('Cluster')),
    },
    ['kind', 'metadata', 'data'],
  ),
  RecordLookup: closed(
    {
      kind: { const: 'TallyRecordLookup' },
      records: list({
        ...closed(
          {
            stream: str,
            seq: int,
            topic_name: str,
            outcome: { enum: outcomes },
            partition_id: nonNegative,
            offset: nonNegative,
            message: str,
            session: str,
            idempotency_key: str,
            definite_by: dateTime,
          },
          ['stream', 'seq', 'topic_name', 'outcome', 'session'],
        ),
        oneOf: [
          { properties: { outcome: { const: 'ACKED' } }, required: ['partition_id', 'offset'] },
          { properties: { outcome: { not: { const: 'ACKED' } } }, required: ['message'] },
        ],
      }),
    },
    ['kind', 'records'],
  ),
};

const groupSummary = {
  group: str,
  state: str,
  status: { enum: ['OK', 'WARN', 'ERR'] },
  complete: { type: 'number' },
  partitionCount: nonNegative,
  maxLag: int,
  totalLag: int,
  maxTimeLagSeconds: { type: 'number' },
  anomalies: counts,
};
const partitionStatus = { enum: ['OK', 'WARN', 'STOP', 'STALL', 'REWIND', 'LOST', 'OUT_OF_RANGE'] };
/** The next page's URL (the same method; see `cursor`), or null on the last page. */
const nextPage: Schema = { anyOf: [{ type: 'string', format: 'uri' }, { type: 'null' }] };
const groupSummaryItem: Schema = {
  ...closed(groupSummary, Object.keys(groupSummary)),
  description: 'a group without its partitions (read them from the consumer-group route)',
};
const restoreTarget = closed(
  { topic: str, partition: nonNegative, current: nullable(int), target: int, goodAt: dateTime },
  ['topic', 'partition', 'current', 'target', 'goodAt'],
);

const reconcile: Record<string, Schema> = {
  ReconcileReport: closed(
    {
      found: {
        type: 'string',
        description:
          'in words: the groups and partitions read, by status, the worst groups not OK named',
      },
      repaired: {
        type: 'string',
        description: 'in words: the mappings written, changed and removed, what retention deleted',
      },
      runAt: dateTime,
      complete: bool,
      unreadable: list(str),
      adminCalls: nonNegative,
      groups: list(groupSummaryItem),
      groupCount: nonNegative,
      runId: { type: 'string', description: 'the run whose groups `next` pages read (kept a day)' },
      next: nextPage,
      mappings: closed(
        {
          written: nonNegative,
          changed: nonNegative,
          removed: nonNegative,
          keptNewer: nonNegative,
          details: list(
            closed(
              {
                action: { enum: ['written', 'changed', 'removed', 'kept-newer'] },
                pk: str,
                sk: str,
              },
              ['action', 'pk', 'sk'],
            ),
          ),
        },
        ['written', 'changed', 'removed', 'keptNewer', 'details'],
      ),
      historyConflicts: nonNegative,
      pruned: closed({ reports: nonNegative, groups: nonNegative, history: nonNegative }, [
        'reports',
        'groups',
        'history',
      ]),
    },
    [
      'found',
      'repaired',
      'runAt',
      'complete',
      'unreadable',
      'adminCalls',
      'groups',
      'groupCount',
      'next',
      'mappings',
      'historyConflicts',
    ],
  ),
  ReconcilePage: closed(
    { runId: str, groups: list(groupSummaryItem), groupCount: nonNegative, next: nextPage },
    ['runId', 'groups', 'groupCount', 'next'],
  ),
  RestoreResult: closed(
    {
      dryRun: bool,
      group: str,
      partitions: list(restoreTarget),
      csv: { type: 'string', description: "kafka-consumer-groups' --from-file CSV of this page" },
      partitionCount: nonNegative,
      next: nextPage,
      executed: closed(
        {
          group: str,
          executedAt: dateTime,
          partitionCount: nonNegative,
          partitions: list(
            closed({ topic: str, partition: nonNegative, before: nullable(int), after: int }, [
              'topic',
              'partition',
              'before',
              'after',
            ]),
          ),
        },
        ['group', 'executedAt', 'partitions', 'partitionCount'],
      ),
    },
    ['dryRun', 'group', 'next'],
  ),
  Acknowledged: closed(
    {
      group: str,
      acknowledged: list(
        closed(
          {
            topic: str,
            partition: nonNegative,
            status: { enum: ['LOST', 'OUT_OF_RANGE'] },
            committed: nullable(int),
          },
          ['topic', 'partition', 'status', 'committed'],
        ),
      ),
    },
    ['group', 'acknowledged'],
  ),
  ConsumerGroup: closed(
    {
      kind: { const: 'KafkaConsumerGroup' },
      metadata: closed({ self: str, resource_name: str }, ['self', 'resource_name']),
      cluster_id: str,
      consumer_group_id: str,
      is_simple: bool,
      state: str,
      consumers: list(
        closed(
          {
            consumer_id: str,
            client_id: str,
            assignments: list(
              closed({ topic_name: str, partition_id: nonNegative }, [
                'topic_name',
                'partition_id',
              ]),
            ),
          },
          ['consumer_id', 'client_id', 'assignments'],
        ),
      ),
      lag_summary: closed(
        {
          max_lag: int,
          total_lag: int,
          max_lag_consumer_id: str,
          max_lag_client_id: str,
          max_lag_topic_name: str,
          max_lag_partition_id: int,
        },
        [
          'max_lag',
          'total_lag',
          'max_lag_consumer_id',
          'max_lag_client_id',
          'max_lag_topic_name',
          'max_lag_partition_id',
        ],
      ),
      tally: closed(
        {
          status: { enum: ['OK', 'WARN', 'ERR'] },
          anomalies: counts,
          max_time_lag_seconds: { type: 'number' },
        },
        ['status', 'anomalies', 'max_time_lag_seconds'],
      ),
    },
    [
      'kind',
      'metadata',
      'cluster_id',
      'consumer_group_id',
      'is_simple',
      'state',
      'consumers',
      'lag_summary',
      'tally',
    ],
  ),
};

/** Burrow's envelope: `error`, `message`, `request` and the answer's own field. */
const burrow = (fields: Record<string, Schema>, error: Schema = { const: false }): Schema =>
  closed({ error, message: str, ...fields, request: ref('BurrowRequest') }, [
    'error',
    'message',
    'request',
    ...Object.keys(fields),
  ]);
/** A closed object whose every property is required. */
const all = (properties: Record<string, Schema>): Schema =>
  closed(properties, Object.keys(properties));
const burrowOffset = nullable(
  closed({ offset: int, timestamp: int, lag: int }, ['offset', 'timestamp', 'lag']),
);
const burrowPartition = closed(
  {
    topic: str,
    partition: nonNegative,
    owner: str,
    client_id: str,
    status: partitionStatus,
    start: burrowOffset,
    end: burrowOffset,
    current_lag: int,
    complete: { type: 'number' },
    time_lag_seconds: nullable({ type: 'number' }),
  },
  ['topic', 'partition', 'owner', 'client_id', 'status', 'start', 'end', 'current_lag', 'complete'],
);

const burrowSchemas: Record<string, Schema> = {
  BurrowRequest: closed({ url: str, host: str }, ['url', 'host']),
  BurrowNotFound: burrow({}, { const: true }),
  BurrowClusters: burrow({ clusters: list(str) }),
  BurrowCluster: burrow({
    module: closed(
      {
        'class-name': { const: 'kafka' },
        servers: list(str),
        'client-profile': closed(
          {
            name: str,
            'client-id': str,
            'kafka-version': str,
            tls: { type: 'null' },
            sasl: { type: 'null' },
          },
          ['name', 'client-id', 'kafka-version', 'tls', 'sasl'],
        ),
        'topic-refresh': int,
        'offset-refresh': int,
      },
      ['class-name', 'servers', 'client-profile', 'topic-refresh', 'offset-refresh'],
    ),
  }),
  BurrowError: {
    ...burrow({}, { const: true }),
    description: "Burrow's error body (`writeErrorResponse`)",
  },
  BurrowConsumerPage: {
    ...burrow({ consumers: list(str), next: nullable(str) }),
    description:
      "a page of the consumer list (Tally's extension, with `?limit=` or `cursor`): `next` is the link to the page after, null on the last",
  },
  BurrowNames: {
    oneOf: [burrow({ consumers: list(str) }), burrow({ topics: list(str) })],
    description: 'a list of consumer groups or of topics',
  },
  BurrowConsumer: burrow({
    topics: {
      type: 'object',
      additionalProperties: list(
        nullable(
          closed({ offsets: list(burrowOffset), owner: str, client_id: str, 'current-lag': int }, [
            'offsets',
            'owner',
            'client_id',
            'current-lag',
          ]),
        ),
      ),
    },
  }),
  BurrowStatus: burrow({
    status: closed(
      {
        cluster: str,
        group: str,
        status: { enum: ['OK', 'WARN', 'ERR', 'NOTFOUND'] },
        complete: { type: 'number' },
        partitions: list(burrowPartition),
        partition_count: nonNegative,
        maxlag: nullable(burrowPartition),
        totallag: int,
      },
      [
        'cluster',
        'group',
        'status',
        'complete',
        'partitions',
        'partition_count',
        'maxlag',
        'totallag',
      ],
    ),
  }),
  BurrowTopic: burrow({ offsets: list(int) }),
  BurrowConfig: burrow({
    general: all({ pidfile: str, 'stdout-logfile': str, 'access-control-allow-origin': str }),
    logging: all({
      filename: str,
      'max-size': int,
      'max-backups': int,
      'max-age': int,
      'use-local-time': bool,
      'use-compression': bool,
      level: str,
    }),
    zookeeper: all({ servers: list(str), timeout: int, 'root-path': str }),
    httpserver: {
      type: 'object',
      additionalProperties: all({ address: str, tls: str, timeout: int }),
    },
  }),
  BurrowModules: burrow({ coordinator: str, modules: list(str) }),
  BurrowModule: burrow({
    module: {
      anyOf: [
        all({
          'class-name': str,
          intervals: int,
          'min-distance': int,
          'group-whitelist': str,
          'expire-group': int,
        }),
        all({ 'class-name': str, 'expire-cache': int }),
        all({
          'class-name': str,
          cluster: str,
          servers: list(str),
          'group-whitelist': str,
          'zookeeper-path': str,
          'zookeeper-timeout': int,
          'client-profile': { type: 'object' },
          'offsets-topic': str,
          'start-latest': bool,
        }),
      ],
    },
  }),
  BurrowLogLevel: burrow({ level: { enum: ['debug', 'info', 'warn', 'error', 'fatal'] } }),
};

const name = { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,249}$' };
const seqNumber: Schema = { type: 'integer', minimum: 1 };
const seqRange: Schema = {
  type: 'array',
  prefixItems: [seqNumber, seqNumber],
  minItems: 2,
  maxItems: 2,
};
const run = (more: Record<string, Schema>, required: string[]): Schema =>
  closed({ from: seqNumber, to: seqNumber, ...more }, ['from', 'to', ...required]);
const perGroup = counts;
/** Where a record is in the log. */
const placement = { partition: nonNegative, offset: nonNegative };
/** One time bucket of a stream (core/audit/stream-audit.ts BucketRow). */
const bucketRow = closed(
  {
    start: dateTime,
    until: dateTime,
    produced: nonNegative,
    inLog: nonNegative,
    notInLedger: nonNegative,
    duplicatesInLog: nonNegative,
    lost: nonNegative,
    unknownAbsent: nonNegative,
    processed: perGroup,
    pending: perGroup,
    redelivered: perGroup,
    // Per group: redeliveries its once guard suppressed, and extra acts (absent in old reports).
    suppressed: perGroup,
    actedTwice: perGroup,
  },
  [
    'start',
    'produced',
    'inLog',
    'notInLedger',
    'duplicatesInLog',
    'lost',
    'unknownAbsent',
    'processed',
    'pending',
    'redelivered',
  ],
);
/** A REWIND or LOST reconcile found on the partition, which may explain a redelivery. */
const reconcileEvent = closed(
  {
    at: dateTime,
    partition: nonNegative,
    status: { enum: ['REWIND', 'LOST'] },
    detail: {
      oneOf: [
        closed({ from: int, to: int, recordsToReconsume: int }, [
          'from',
          'to',
          'recordsToReconsume',
        ]),
        closed({ lastGoodOffset: int, lastGoodAt: int }, ['lastGoodOffset', 'lastGoodAt']),
      ],
    },
  },
  ['at', 'partition', 'status'],
);
const auditFindings = {
  ...closed(
    {
      stream: str,
      produced: nonNegative,
      inLog: nonNegative,
      processed: counts,
      producerDuplicates: list(
        closed(
          {
            seq: seqNumber,
            copies: list(
              closed({ ...placement, session: str }, ['partition', 'offset', 'session']),
            ),
            times: nonNegative,
          },
          ['seq', 'copies', 'times'],
        ),
      ),
      consumerDuplicates: list(
        run({ group: str, times: nonNegative, reconcileEvents: list(reconcileEvent) }, [
          'group',
          'times',
          'reconcileEvents',
        ]),
      ),
      lost: list(
        run(
          {
            acked: closed(placement, ['partition', 'offset']),
            ackedEach: list(
              closed({ seq: seqNumber, ...placement }, ['seq', 'partition', 'offset']),
            ),
          },
          [],
        ),
      ),
      pending: list(run({ group: str }, ['group'])),
      unknownLanded: list(closed({ seq: seqNumber, ...placement }, ['seq', 'partition', 'offset'])),
      unknownAbsent: list(seqRange),
      buckets: list(bucketRow),
      belowFloor: nonNegative,
      abortedCopies: nonNegative,
      aborted: list(
        closed({ seq: seqNumber, ...placement, session: str }, ['seq', 'partition', 'offset']),
      ),
      leftOff: counts,
      allocated: nonNegative,
      void: nonNegative,
      voidedNow: nonNegative,
      foundNow: nonNegative,
      unrecorded: list(seqRange),
    },
    [
      'stream',
      'produced',
      'inLog',
      'processed',
      'producerDuplicates',
      'consumerDuplicates',
      'lost',
      'pending',
      'unknownLanded',
      'unknownAbsent',
      'buckets',
    ],
  ),
  description: "one stream's findings by layer, with its buckets",
};

/** What offset-repair asks a person to approve: the stored plan's id and digest, and a preview. */
const offsetRepairSubject = closed(
  {
    group: str,
    planId: { type: 'string', format: 'uuid' },
    digest: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
    partitions: nonNegative,
    topics: list(str),
    preview: { ...list(restoreTarget), maxItems: 20 },
  },
  ['group', 'planId', 'digest', 'partitions', 'topics', 'preview'],
);

const audits: Record<string, Schema> = {
  ReceiptsRequest: {
    oneOf: [
      closed(
        {
          group: name,
          stream: name,
          seqs: {
            ...list({
              type: 'array',
              prefixItems: [
                { type: 'integer', minimum: 1 },
                { type: 'integer', minimum: 1 },
              ],
              minItems: 2,
              maxItems: 2,
            }),
            minItems: 1,
            maxItems: 10_000,
          },
        },
        ['group', 'stream', 'seqs'],
      ),
      closed(
        {
          group: name,
          topic: name,
          buckets: {
            ...list(
              closed({ start: dateTime, end: dateTime, count: nonNegative }, [
                'start',
                'end',
                'count',
              ]),
            ),
            minItems: 1,
          },
        },
        ['group', 'topic', 'buckets'],
      ),
    ],
  },
  ReceiptsAccepted: {
    oneOf: [
      closed({ accepted: { const: 'seqs' }, group: str, stream: str, records: nonNegative }, [
        'accepted',
        'group',
        'stream',
        'records',
      ]),
      closed({ accepted: { const: 'buckets' }, group: str, topic: str, buckets: nonNegative }, [
        'accepted',
        'group',
        'topic',
        'buckets',
      ]),
    ],
  },
  AuditRequest: closed(
    {
      topic: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,249}$' },
      groups: list({ type: 'string', minLength: 1 }),
    },
    ['topic'],
  ),
  AuditReport: closed(
    {
      auditId: str,
      topic: str,
      at: dateTime,
      complete: bool,
      scanned: nonNegative,
      scannedTotal: nonNegative,
      untracked: nonNegative,
      unread: nonNegative,
      checkpoint: list(closed({ partition: nonNegative, next: int }, ['partition', 'next'])),
      streams: list(auditFindings),
      streamCount: nonNegative,
      next: nextPage,
      topicBuckets: list(
        closed({ start: dateTime, until: dateTime, inLog: nonNegative, counted: perGroup }, [
          'start',
          'inLog',
          'counted',
        ]),
      ),
      settled: closed({ landed: nonNegative, notWritten: nonNegative }, ['landed', 'notWritten']),
      timingsMs: counts,
      retention: closed({ horizonMs: nonNegative, foldedBefore: dateTime, overflow: str }, [
        'horizonMs',
      ]),
    },
    [
      'auditId',
      'topic',
      'at',
      'complete',
      'scanned',
      'scannedTotal',
      'untracked',
      'unread',
      'checkpoint',
      'streams',
      'topicBuckets',
      'settled',
    ],
  ),
  Approvals: closed(
    {
      approvals: list({
        ...closed(
          {
            token: str,
            workflow: str,
            execution: nullable(str),
            requestedAt: dateTime,
            subject: {
              type: 'object',
              description: 'what the workflow asks to approve, as its definition passes it',
            },
          },
          ['token', 'workflow', 'execution', 'requestedAt', 'subject'],
        ),
        // Another workflow, or offset-repair's subject (its WaitForApproval state).
        anyOf: [
          { properties: { workflow: { not: { const: 'offset-repair' } } } },
          { properties: { subject: offsetRepairSubject } },
        ],
      }),
    },
    ['approvals'],
  ),
  Decision: closed(
    {
      decision: { enum: ['approve', 'reject'] },
      by: { type: 'string', maxLength: 1000, description: 'ignored when the caller is known' },
      reason: { type: 'string', maxLength: 1000 },
    },
    ['decision'],
  ),
  Decided: closed(
    {
      token: str,
      workflow: str,
      execution: nullable(str),
      state: { enum: ['APPROVED', 'REJECTED'] },
      decidedBy: str,
    },
    ['token', 'workflow', 'execution', 'state', 'decidedBy'],
  ),
};

export const schemas: Record<string, Schema> = {
  ...errors,
  ...publish,
  ...reconcile,
  ...burrowSchemas,
  ...audits,
};
