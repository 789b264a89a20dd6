// The MSK control plane is faked with aws-sdk-client-mock: AWS is unreachable from tests.
import {
  BadRequestException,
  ForbiddenException,
  GetBootstrapBrokersCommand,
  InternalServerErrorException,
  KafkaClient,
  NotFoundException,
  TooManyRequestsException,
  UnauthorizedException,
} from '@aws-sdk/client-kafka';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createMskBootstrap,
  type MskAuthMode,
  MskBootstrapError,
  type MskBootstrapOptions,
} from '../../../../functions/adapters/msk/bootstrap.js';
import { createIamTokenProvider } from '../../../../functions/adapters/msk/iam-token.js';

const ARN =
  'arn:aws:kafka:eu-west-1:123456789012:cluster/tally-dev/6357e0b2-0e6a-4b86-a0b4-70df934c2e31-5';
const kafka = mockClient(KafkaClient);
const client = new KafkaClient({ region: 'eu-west-1' });

const ALL_LISTENERS = {
  BootstrapBrokerString: 'b-1.plain:9092,b-2.plain:9092',
  BootstrapBrokerStringTls: 'b-1.tls:9094,b-2.tls:9094',
  BootstrapBrokerStringSaslScram: 'b-1.scram:9096,b-2.scram:9096',
  BootstrapBrokerStringSaslIam: 'b-1.iam:9098,b-2.iam:9098',
};

function bootstrap(overrides: Partial<MskBootstrapOptions> = {}) {
  return createMskBootstrap({
    client,
    clusterArn: ARN,
    auth: 'iam',
    region: 'eu-west-1',
    scram: { username: 'tally', password: 's3cret-pw' },
    signToken: async () => ({ token: 'signed-token', expiryTime: Date.now() + 900_000 }),
    ...overrides,
  });
}

function calls(): number {
  return kafka.commandCalls(GetBootstrapBrokersCommand).length;
}

function throttling(): Error {
  const error = new Error('Rate exceeded');
  error.name = 'ThrottlingException';
  return error;
}

beforeEach(() => {
  kafka.reset();
  kafka.on(GetBootstrapBrokersCommand).resolves(ALL_LISTENERS);
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('MSK bootstrap: listener per auth mode', () => {
  it.each<[MskAuthMode, string[], boolean, string]>([
    ['iam', ['b-1.iam:9098', 'b-2.iam:9098'], true, 'iam'],
    ['scram', ['b-1.scram:9096', 'b-2.scram:9096'], true, 'scram-sha-512'],
    ['tls', ['b-1.tls:9094', 'b-2.tls:9094'], true, 'none'],
    ['plaintext', ['b-1.plain:9092', 'b-2.plain:9092'], false, 'none'],
  ])('%s picks its own broker string', async (auth, brokers, tls, mechanism) => {
    const connection = await bootstrap({ auth }).resolve();
    expect(connection.brokers).toEqual(brokers);
    expect(connection.tls).toBe(tls);
    expect(connection.auth.mechanism).toBe(mechanism);
  });

  it('gives SCRAM credentials through and IAM the cluster region', async () => {
    const scram = await bootstrap({ auth: 'scram' }).resolve();
    expect(scram.auth).toEqual({
      mechanism: 'scram-sha-512',
      username: 'tally',
      password: 's3cret-pw',
    });
    const iam = await bootstrap({ auth: 'iam' }).resolve();
    expect(iam.auth).toMatchObject({ mechanism: 'iam', region: 'eu-west-1' });
  });

  it('splits on commas, trims and drops empty entries', async () => {
    kafka
      .on(GetBootstrapBrokersCommand)
      .resolves({ BootstrapBrokerStringSaslIam: ' a:9098 ,, b:9098 ,' });
    expect((await bootstrap().resolve()).brokers).toEqual(['a:9098', 'b:9098']);
  });

  it('asks for the configured cluster ARN', async () => {
    await bootstrap().resolve();
    expect(kafka.commandCalls(GetBootstrapBrokersCommand)[0]?.args[0].input).toEqual({
      ClusterArn: ARN,
    });
  });

  it.each([undefined, '', ' , '])(
    'rejects a missing listener (%j), naming field and ARN',
    async (value) => {
      kafka
        .on(GetBootstrapBrokersCommand)
        .resolves({ ...ALL_LISTENERS, BootstrapBrokerStringSaslIam: value });
      const error = await bootstrap()
        .resolve()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MskBootstrapError);
      expect((error as MskBootstrapError).message).toContain('BootstrapBrokerStringSaslIam');
      expect((error as MskBootstrapError).message).toContain(ARN);
      expect((error as MskBootstrapError).message).toContain('IAM authentication');
      expect((error as MskBootstrapError).retriable).toBe(false);
    },
  );
});

describe('MSK bootstrap: caching per container', () => {
  it('reuses the first result: two resolve() calls, one GetBootstrapBrokers', async () => {
    const msk = bootstrap();
    const first = await msk.resolve();
    const second = await msk.resolve();
    expect(second).toBe(first);
    expect(calls()).toBe(1);
  });

  it('shares one in-flight request between concurrent first calls', async () => {
    const msk = bootstrap();
    const results = await Promise.all([msk.resolve(), msk.resolve(), msk.resolve()]);
    expect(calls()).toBe(1);
    expect(results[1]).toBe(results[0]);
    expect(results[2]).toBe(results[0]);
  });

  it('does not cache a failure: the next call asks again', async () => {
    kafka.on(GetBootstrapBrokersCommand).rejectsOnce(throttling()).resolves(ALL_LISTENERS);
    const msk = bootstrap();
    await expect(msk.resolve()).rejects.toBeInstanceOf(MskBootstrapError);
    await expect(msk.resolve()).resolves.toMatchObject({
      brokers: ['b-1.iam:9098', 'b-2.iam:9098'],
    });
    expect(calls()).toBe(2);
  });
});

describe('MSK bootstrap: control-plane errors', () => {
  async function failWith(cause: Error): Promise<MskBootstrapError> {
    kafka.on(GetBootstrapBrokersCommand).rejects(cause);
    const error = await bootstrap()
      .resolve()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MskBootstrapError);
    return error as MskBootstrapError;
  }

  it('wraps NotFoundException as not retriable, with ARN, stable name/code and cause', async () => {
    const cause = new NotFoundException({
      message: 'Cluster not found',
      $metadata: { httpStatusCode: 404 },
    });
    const error = await failWith(cause);
    expect(error.name).toBe('MskBootstrapError');
    expect(error.code).toBe('MSK_BOOTSTRAP_FAILED');
    expect(error.retriable).toBe(false);
    expect(error.message).toContain(ARN);
    expect(error.message).toContain('NotFoundException');
    expect(error.cause).toBe(cause);
  });

  it.each([
    ['NotFoundException without a status', new NotFoundException({ message: 'x', $metadata: {} })],
    [
      'BadRequestException',
      new BadRequestException({ message: 'x', $metadata: { httpStatusCode: 400 } }),
    ],
    [
      'ForbiddenException',
      new ForbiddenException({ message: 'x', $metadata: { httpStatusCode: 403 } }),
    ],
    [
      'UnauthorizedException',
      new UnauthorizedException({ message: 'x', $metadata: { httpStatusCode: 401 } }),
    ],
    [
      'CredentialsProviderError',
      Object.assign(new Error('no creds'), { name: 'CredentialsProviderError' }),
    ],
  ])('marks %s as not retriable', async (_, cause) => {
    expect((await failWith(cause)).retriable).toBe(false);
  });

  it('marks TooManyRequestsException as retriable even without a status', async () => {
    const cause = new TooManyRequestsException({ message: 'slow down', $metadata: {} });
    expect((await failWith(cause)).retriable).toBe(true);
  });

  it('marks throttling as retriable', async () => {
    expect((await failWith(throttling())).retriable).toBe(true);
  });

  it('marks a 500 as retriable', async () => {
    const cause = new InternalServerErrorException({
      message: 'boom',
      $metadata: { httpStatusCode: 500 },
    });
    expect((await failWith(cause)).retriable).toBe(true);
  });

  it('marks a network error (no HTTP response) as retriable', async () => {
    const cause = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect((await failWith(cause)).retriable).toBe(true);
  });
});

describe('MSK bootstrap: configuration checked at creation', () => {
  it.each([
    '',
    'not-an-arn',
    'arn:aws:kafka:eu-west-1:123456789012:topic/tally-dev/abc/orders',
    'arn:aws:sqs:eu-west-1:123456789012:cluster/x/y',
  ])('rejects %j naming MSK_CLUSTER_ARN', (clusterArn) => {
    expect(() => bootstrap({ clusterArn })).toThrow(/MSK_CLUSTER_ARN/);
  });

  it('rejects a region that differs from the ARN region', () => {
    expect(() => bootstrap({ region: 'us-east-1' })).toThrow(/us-east-1.*eu-west-1/);
  });

  it('rejects SCRAM without credentials, naming the missing field and never the password', () => {
    expect(() =>
      createMskBootstrap({ client, clusterArn: ARN, region: 'eu-west-1', auth: 'scram' }),
    ).toThrow(/scram\.username/);
    const noUser = () =>
      bootstrap({ auth: 'scram', scram: { username: '', password: 's3cret-pw' } });
    expect(noUser).toThrow(/scram\.username/);
    expect(noUser).not.toThrow(/s3cret/);
    const noPassword = () =>
      bootstrap({ auth: 'scram', scram: { username: 'tally', password: '' } });
    expect(noPassword).toThrow(/scram\.password/);
  });

  it('makes no control-plane call at creation', () => {
    bootstrap();
    expect(calls()).toBe(0);
  });
});

describe('MSK IAM token provider', () => {
  it('signs with the injected signer for the region and returns value and lifetime', async () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_000_000);
    const signToken = vi.fn(async () => ({ token: 'signed-token', expiryTime: 1_900_000 }));
    const connection = await bootstrap({ auth: 'iam', signToken }).resolve();
    if (connection.auth.mechanism !== 'iam') throw new Error('expected IAM auth');
    await expect(connection.auth.token()).resolves.toEqual({
      value: 'signed-token',
      lifetimeMs: 900_000,
    });
    expect(signToken).toHaveBeenCalledWith('eu-west-1');
  });

  it('signs afresh on every call, so reconnects never reuse an expired token', async () => {
    let n = 0;
    const token = createIamTokenProvider(
      'eu-west-1',
      async () => ({ token: `t${++n}`, expiryTime: 10 }),
      () => 4,
    );
    expect(await token()).toEqual({ value: 't1', lifetimeMs: 6 });
    expect(await token()).toEqual({ value: 't2', lifetimeMs: 6 });
  });
});
