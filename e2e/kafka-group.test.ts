/**
 * kafkajs consumer groups on a real `mq broker start` through its Kafka port:
 * a member in its own process is SIGKILLed, and once its session expires the
 * group rebalances and the surviving kafkajs member owns every partition.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { MqClient } from '@mq/client';
import { freePort } from '../tools/free-port.mjs';
import { REPO_ROOT, cleanup, startBroker, uniqueName, waitFor } from './src/harness.js';

afterAll(async () => {
  await cleanup();
});

it('a SIGKILLed kafkajs member leaves the group when its session expires; the other member gets its partitions', async () => {
  const kafkaPort = await freePort();
  const broker = await startBroker({ args: ['--kafka-port', String(kafkaPort), '--config-set', 'group.min.session.timeout.ms=1000', '--config-set', 'group.initial.rebalance.delay.ms=0'] });
  const topic = uniqueName('kafka-group');
  const group = uniqueName('kafka-group-g');
  const mq = new MqClient({ bootstrap: broker.bootstrap });
  await mq.admin().createTopic(topic, { numPartitions: 4 });
  await mq.close();

  const worker = spawn(process.execPath, [path.join(REPO_ROOT, 'e2e', 'kafka-group-worker.mjs'), JSON.stringify({ broker: `127.0.0.1:${kafkaPort}`, group, topic, sessionTimeoutMs: 2000 })], { stdio: ['ignore', 'pipe', 'inherit'] });
  const workerAssigned: number[][] = [];
  worker.stdout.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n')) if (line.trim()) workerAssigned.push((JSON.parse(line) as { ps: number[] }).ps);
  });
  const kafka = new Kafka({ clientId: 'kafka-group-test', brokers: [`127.0.0.1:${kafkaPort}`], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 6000, rebalanceTimeout: 6000, heartbeatInterval: 300, maxWaitTimeInMs: 200 });
  let mine: number[] = [];
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    mine = [...(e.payload.memberAssignment[topic] ?? [])].sort((a, b) => a - b);
  });
  try {
    await waitFor(() => workerAssigned.at(-1)?.length === 4, { timeout: 30_000, message: 'the worker owning all 4 partitions' });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async () => undefined });
    await waitFor(() => mine.length === 2 && workerAssigned.at(-1)?.length === 2, { timeout: 30_000, message: `a split 2/2 (mine ${mine}, worker ${workerAssigned.at(-1)})` });
    expect([...mine, ...workerAssigned.at(-1)!].sort()).toEqual([0, 1, 2, 3]);
    worker.kill('SIGKILL');
    await waitFor(() => mine.length === 4, { timeout: 30_000, message: `all 4 partitions after the SIGKILL (mine ${mine})` });
  } finally {
    worker.kill('SIGKILL');
    await consumer.disconnect();
  }
}, 90_000);
