/**
 * kcat (librdkafka) against the Kafka listener, as a Kafka user runs it:
 * -L lists the broker, topics, partitions, leaders and ISR; -P produces with
 * keys and headers; -C -o beginning -e reads them back with partition,
 * offset, key and headers; -G consumes in a group and commits its offsets.
 * kcat comes from Debian (tools/ensure-kcat.sh).
 */
import { execFile } from 'node:child_process';
import { startTestBroker, httpJson, topicName, waitFor, type TestBroker } from './helpers.js';

function kcat(args: string[], input?: string, timeoutMs = 20_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile('kcat', args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { stdout, stderr }));
      else resolve({ stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
    else child.stdin!.end();
  });
}

describe('kcat against the Kafka listener', () => {
  let t: TestBroker;
  let bootstrap: string;
  beforeAll(async () => {
    t = await startTestBroker({ 'kafka.listener.port': '0', 'auto.create.topics.enable': 'true', 'group.initial.rebalance.delay.ms': '0' });
    bootstrap = `127.0.0.1:${t.broker.kafkaPort}`;
  });
  afterAll(() => t.cleanup());

  it('kcat -L lists the broker, the topic, its partitions, leaders and ISR', async () => {
    const topic = topicName('kcat-l');
    expect((await httpJson(`${t.httpUrl}/topics`, { body: { name: topic, partition_count: 3 } })).status).toBe(201);
    const { stdout } = await kcat(['-b', bootstrap, '-L', '-t', topic]);
    expect(stdout).toContain(`broker ${t.broker.brokerId} at ${bootstrap} (controller)`);
    expect(stdout).toContain(`topic "${topic}" with 3 partitions:`);
    for (let p = 0; p < 3; p++) expect(stdout).toContain(`partition ${p}, leader ${t.broker.brokerId}, replicas: ${t.broker.brokerId}, isrs: ${t.broker.brokerId}`);
  });

  it('kcat -P with keys and headers, read back by kcat -C -o beginning -e with partition, offset, key and headers', async () => {
    const topic = topicName('kcat-p');
    await kcat(['-b', bootstrap, '-P', '-t', topic, '-p', '0', '-K', ':', '-H', 'trace=abc', '-H', 'n=1'], 'k1:v1\nk2:v2\nk3:v3\n');
    const { stdout } = await kcat(['-b', bootstrap, '-C', '-t', topic, '-o', 'beginning', '-e', '-f', '%p|%o|%k|%s|%h\\n']);
    expect(stdout.trim().split('\n')).toEqual(['0|0|k1|v1|trace=abc,n=1', '0|1|k2|v2|trace=abc,n=1', '0|2|k3|v3|trace=abc,n=1']);
  });

  it('kcat -G consumes in a group and commits the offsets it consumed', async () => {
    const topic = topicName('kcat-g');
    const group = topicName('kcat-group');
    await kcat(['-b', bootstrap, '-P', '-t', topic, '-K', ':'], 'a:1\nb:2\n');
    const { stdout } = await kcat(['-b', bootstrap, '-G', group, topic, '-o', 'beginning', '-e', '-f', '%k=%s\\n', '-X', 'enable.partition.eof=true'], undefined, 30_000);
    expect(stdout.trim().split('\n')).toEqual(['a=1', 'b=2']);
    const committed = await waitFor(async () => {
      const r = await httpJson(`${t.httpUrl}/groups/${group}`);
      const o = (r.body.offsets ?? []).find((x: { topic: string }) => x.topic === topic);
      return o?.committed_offset === 2 ? o : undefined;
    });
    expect(committed.partition).toBe(0);
  });
});
