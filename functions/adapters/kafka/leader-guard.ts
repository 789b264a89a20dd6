import type { ICustomPartitioner, Message, PartitionMetadata } from 'kafkajs';

// Why this exists (issue 16, seed 1): kafkajs 2.2.4 sends one `producer.send` as one produce
// request per leader broker and, inside its retrier, regroups the partitions by the *current*
// leaders on every attempt, skipping brokers that already answered. A partition's sequence number
// is advanced when its request is made and rolled back only when that request throws. So when
// broker A wrote partition P and broker B failed, and P's leader is B (or any broker without an
// answer) at the next attempt, P went out again under a new sequence number: the broker appended
// it a second time, a duplicate within one producer session.
//
// The guard is the partitioner kafkajs calls for every message of every attempt, with the very
// metadata it is about to group by (nothing is awaited between the two). It lets an attempt go
// only when every message of the send is led by the one broker the send was planned for; an
// attempt that would span brokers, or go to another broker, is stopped there, before any
// sequence number moves or any request is made. So every attempt is one request to one broker,
// and a request that fails rolls back the sequence numbers of everything in it: kafkajs's own
// retry, and Tally's resend of a held batch, carry the same sequence numbers, which the broker
// (or a new leader that replicated the batch) recognises as the batch it already has.

/** Where no leader is known: the partition is not in the metadata kafkajs holds. */
export const NO_PARTITION = -2;

/** Stops a send inside kafkajs before it makes a request; kafkajs passes it on without retrying. */
export class SendHeld extends Error {
  override readonly name = 'SendHeld';
  /** kafkajs retries unless `retriable` is false; a held send goes back to Tally at once. */
  readonly retriable = false;
  constructor(
    readonly reason: 'moved' | 'closed',
    message: string,
  ) {
    super(message);
  }
}

/** One send as kafkajs sees it: the messages of one planned request. */
export interface GuardedSend {
  /** The broker planned for; undefined: whichever leads the first message's partition. */
  leader: number | undefined;
  /** An attempt passed the guard whole: a produce request with these messages may have been made. */
  mayHaveGone: boolean;
}

interface Attempt extends GuardedSend {
  readonly last: Message;
}

interface TopicLeaders {
  readonly source: readonly PartitionMetadata[];
  readonly byPartition: ReadonlyMap<number, number>;
}

/**
 * Where a guarded message keeps its send, on the message itself: a property set per message is
 * a fraction of a WeakMap entry's cost (0.5 ms per 1,000 records, issue 32), and each guard has
 * its own symbol, so a message is guarded by the guard that guarded it last (as a WeakMap per
 * guard held it).
 */
type Guarded = Message & { [key: symbol]: Attempt | undefined };

export function createLeaderGuard() {
  const attempt = Symbol('tally.leaderGuard.send');
  const topics = new Map<string, TopicLeaders>();
  let closed: string | undefined;

  /** kafkajs hands the same metadata array to every message until it refreshes. */
  function leadersOf(topic: string, metadata: readonly PartitionMetadata[]): TopicLeaders {
    const known = topics.get(topic);
    if (known?.source === metadata) return known;
    const byPartition = new Map<number, number>();
    for (const entry of metadata) byPartition.set(entry.partitionId, entry.leader);
    const fresh = { source: metadata, byPartition };
    topics.set(topic, fresh);
    return fresh;
  }

  const partitioner: ICustomPartitioner = () => (args) => {
    const partition = args.message.partition as number;
    const { byPartition } = leadersOf(args.topic, args.partitionMetadata);
    const send = (args.message as Guarded)[attempt];
    if (send === undefined) return partition;
    if (closed !== undefined) throw new SendHeld('closed', `not sent: ${closed}`);
    const leader = byPartition.get(partition) ?? NO_PARTITION;
    send.leader ??= leader;
    if (send.leader !== leader) {
      throw new SendHeld(
        'moved',
        `partition ${partition} is led by broker ${leader}, not ${send.leader}: held before sending`,
      );
    }
    if (args.message === send.last) send.mayHaveGone = true;
    return partition;
  };

  return {
    /** The producer's `createPartitioner`. */
    partitioner,
    /** Guards the next attempts of a send of these messages (each message in one send at a time). */
    guard(messages: readonly Message[], leader: number | undefined): GuardedSend {
      const send: Attempt = {
        leader,
        mayHaveGone: false,
        last: messages[messages.length - 1] as Message,
      };
      for (const message of messages) (message as Guarded)[attempt] = send;
      return send;
    },
    /** Each partition's leader as kafkajs last saw it; undefined before its first send. */
    leaders(topic: string): ReadonlyMap<number, number> | undefined {
      return topics.get(topic)?.byPartition;
    },
    /**
     * No attempt starts after this, not even kafkajs's own retry of a send already made. An
     * attempt already past the partitioner (connecting to its broker, up to kafkajs's connection
     * timeout) still goes out: its records are UNKNOWN, and the audit's horizon outlasts it.
     */
    close(reason: string): void {
      closed ??= reason;
    },
  };
}

export type LeaderGuard = ReturnType<typeof createLeaderGuard>;

/** The SendHeld inside a kafkajs error (kafkajs wraps what it does not retry). */
export function heldIn(error: unknown): SendHeld | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof SendHeld) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
