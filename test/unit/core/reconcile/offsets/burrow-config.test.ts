import { describe, expect, it } from 'vitest';
import {
  configAnswer,
  logLevel,
  zapLevel,
} from '../../../../../functions/core/reconcile/offsets/burrow-config.js';

// Burrow's read-only config routes (httpserver/config.go, GET /v3/admin/loglevel) from Tally's
// settings: Burrow's messages, field names and 404 bodies.

const request = { url: '/v3/config', host: 'tally' };
const settings = {
  cluster: 'local',
  servers: ['b-1:9092'],
  intervals: 10,
  expireGroupSeconds: 1_209_600,
  logLevel: 'INFO',
};
const isLocal = (name: string) => name.toLowerCase() === 'local';
const get = (...parts: string[]) => configAnswer(request, parts, settings, isLocal);

describe("Burrow's /v3/config", () => {
  it('main config: general, logging, zookeeper and httpserver', () => {
    expect(get()).toEqual({
      statusCode: 200,
      body: {
        error: false,
        message: 'main config returned',
        general: { pidfile: '', 'stdout-logfile': '', 'access-control-allow-origin': '' },
        logging: {
          filename: '',
          'max-size': 0,
          'max-backups': 0,
          'max-age': 0,
          'use-local-time': false,
          'use-compression': false,
          level: 'info',
        },
        zookeeper: { servers: [], timeout: 0, 'root-path': '' },
        httpserver: {},
        request,
      },
    });
  });

  it('module lists name their coordinator', () => {
    const list = (kind: string) => get(kind).body as { coordinator: string; modules: string[] };
    expect(get('storage')).toMatchObject({
      statusCode: 200,
      body: { error: false, message: 'module list returned', coordinator: 'storage' },
    });
    expect(list('storage').modules).toEqual(['default']);
    expect(list('evaluator').modules).toEqual(['default']);
    expect(list('cluster').modules).toEqual(['local']);
    expect(list('consumer').modules).toEqual(['local']);
    expect(list('notifier').modules).toEqual([]);
  });

  it("storage: the window is Burrow's intervals, retention its expire-group", () => {
    expect(get('storage', 'default').body).toMatchObject({
      message: 'storage module detail returned',
      module: {
        'class-name': 'dynamodb',
        intervals: 10,
        'min-distance': 0,
        'group-whitelist': '',
        'expire-group': 1_209_600,
      },
    });
  });

  it('evaluator, cluster and consumer modules', () => {
    expect(get('evaluator', 'default').body).toMatchObject({
      message: 'evaluator module detail returned',
      module: { 'class-name': 'reconcile', 'expire-cache': 0 },
    });
    expect(get('cluster', 'LOCAL').body).toMatchObject({
      message: 'cluster module detail returned',
      module: { 'class-name': 'kafka', servers: ['b-1:9092'] },
    });
    expect(get('consumer', 'local').body).toMatchObject({
      message: 'consumer module detail returned',
      module: {
        'class-name': 'kafka',
        cluster: 'local',
        servers: ['b-1:9092'],
        'client-profile': { name: 'tally', 'client-id': 'tally' },
        'start-latest': false,
      },
    });
  });

  it("a module that is not there: 404 with Burrow's message", () => {
    for (const [kind, name] of [
      ['storage', 'other'],
      ['evaluator', 'other'],
      ['cluster', 'other'],
      ['consumer', 'other'],
      ['notifier', 'slack'],
    ] as const) {
      expect(get(kind, name), kind).toEqual({
        statusCode: 404,
        body: { error: true, message: `${kind} module not found`, request },
      });
    }
  });
});

describe('GET /v3/admin/loglevel', () => {
  it("answers the level as Burrow's logger (zap) names it", () => {
    expect(logLevel(request, settings)).toEqual({
      statusCode: 200,
      body: { error: false, message: 'log level returned', level: 'info', request },
    });
    expect(['TRACE', 'DEBUG', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'].map(zapLevel)).toEqual([
      'debug',
      'debug',
      'warn',
      'error',
      'fatal',
      'fatal',
    ]);
  });
});
