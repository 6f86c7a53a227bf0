#!/usr/bin/env node
/**
 * The longest synchronous step of encoding the largest answers the caps allow
 * (issue 22): one step (protobufjs, as before) against the sliced encoder
 * (server/sliced-response.ts). Wall clock and CPU time of the one-step encode;
 * for the sliced one, its longest step between yields and the event loop's
 * longest gap while it ran. Best and worst of --runs runs (on a shared machine
 * the best is the figure least disturbed by other work); prints the load average.
 *   node packages/broker/bench/large-answers.mjs [--runs 5]
 */
import { loadavg } from 'node:os';
import { encodeResponse } from '@mq/protocol/wire';
import { encodeSlicedResponse } from '../dist/server/sliced-response.js';

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] || 5) || 5;

const member = (i, n) => ({ memberId: `client-${i}-0123456789abcdef0123456789abcdef`, groupInstanceId: '', clientId: 'consumer-client', clientHost: '/127.0.0.1', metadata: Buffer.alloc(n, i % 251), assignment: Buffer.alloc(60, 1) });
const group = (g, m, n) => ({ errorCode: 0, groupId: `group-${g}`, state: 'Stable', protocolType: 'consumer', protocol: 'range', generationId: 1, leader: 'client-0', members: Array.from({ length: m }, (_, i) => member(i, n)) });
const configEntries = Array.from({ length: 14 }, (_, i) => ({ name: `some.config.name.${i}`, value: '604800000', source: 'default' }));
const partition = (p) => ({ errorCode: 0, partition: p, leader: 1, leaderEpoch: 3, replicas: [1, 2, 3], isr: [1, 2, 3], offlineReplicas: [], partitionEpoch: 5 });

// At the caps: DescribeGroups' 16 MiB answer budget (group.max.size 10,000; request.max.entries 20,000 groups);
// DescribeConfigs and Metadata of every topic a 3-broker cluster at the default partition budget (4,000 per broker) can hold.
const CASES = [
  ['describeGroups', '1 group x 10,000 members x 1.6 KiB', () => ({ groups: [group(1, 10_000, 1600)] })],
  ['describeGroups', '20,000 groups x 1 member x 700 B', () => ({ groups: Array.from({ length: 20_000 }, (_, g) => group(g, 1, 700)) })],
  ['describeConfigs', '12,000 topics x 14 entries', () => ({ results: Array.from({ length: 12_000 }, (_, t) => ({ resource: `topic-${t}`, errorCode: 0, entries: configEntries })) })],
  ['metadata', '12,000 topics x 1 partition (RF 3)', () => ({ clusterId: 'c', controllerId: 1, brokers: [1, 2, 3].map((id) => ({ id, host: '127.0.0.1', port: 9000 + id })), topics: Array.from({ length: 12_000 }, (_, t) => ({ errorCode: 0, name: `topic-${t}`, topicId: `id${t}`.padEnd(22, 'x'), partitions: [partition(0)] })) })],
  ['metadata', '1 topic x 10,000 partitions', () => ({ topics: [{ errorCode: 0, name: 't', topicId: 'x', partitions: Array.from({ length: 10_000 }, (_, p) => partition(p)) }] })],
];

const fmt = (xs) => `${Math.min(...xs).toFixed(1)}..${Math.max(...xs).toFixed(1)}`;
console.log(`load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}; ${runs} runs; ms as best..worst`);
for (const [api, label, build] of CASES) {
  const frame = { correlationId: 1, [api]: build() };
  const one = [];
  const oneCpu = [];
  const step = [];
  const gap = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    bytes = encodeResponse(frame).length;
    one.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    oneCpu.push((c.user + c.system) / 1000);
    let last = performance.now();
    let longest = 0;
    let running = true;
    const tick = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const r = await encodeSlicedResponse(frame, api);
    running = false;
    step.push(r.longestStepMs);
    gap.push(longest);
  }
  console.log(`${api} ${label} (${(bytes / 2 ** 20).toFixed(1)} MiB): one step ${fmt(one)} ms (CPU ${fmt(oneCpu)} ms); sliced: longest step ${fmt(step)} ms, longest event-loop gap ${fmt(gap)} ms`);
}
