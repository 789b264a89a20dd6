// A member of the chaos workload's consumer group: a plain kafkajs consumer in its own process,
// committing what it read, so the nemesis can kill it (SIGKILL) mid-generation and the group
// rebalances while reconcile watches its offsets.
import { Kafka, logLevel } from 'kafkajs';

const [brokers, topic, groupId] = process.argv.slice(2) as [string, string, string];
const kafka = new Kafka({
  clientId: 'tally-chaos-member',
  brokers: brokers.split(','),
  logLevel: logLevel.NOTHING,
});
const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000 });
await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
await consumer.run({ autoCommitInterval: 1000, eachMessage: async () => {} });
process.on('disconnect', () => process.exit(0));
