// A kafkajs consumer-group member in its own process, for e2e/kafka-group.test.ts
// (so a test can SIGKILL it). Configuration comes as one JSON argument; each
// assignment goes to stdout as one JSON line: {"ev":"assigned","ps":[0,1]}.
import { Kafka, logLevel } from 'kafkajs';

const cfg = JSON.parse(process.argv[2]);
const kafka = new Kafka({ clientId: 'kafka-group-worker', brokers: [cfg.broker], logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({ groupId: cfg.group, sessionTimeout: cfg.sessionTimeoutMs, heartbeatInterval: 300, maxWaitTimeInMs: 200 });
consumer.on(consumer.events.GROUP_JOIN, (e) => {
  process.stdout.write(`${JSON.stringify({ ev: 'assigned', ps: [...(e.payload.memberAssignment[cfg.topic] ?? [])].sort((a, b) => a - b) })}\n`);
});
await consumer.connect();
await consumer.subscribe({ topic: cfg.topic, fromBeginning: true });
await consumer.run({ eachMessage: async () => undefined });
