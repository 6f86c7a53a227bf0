/**
 * Transactions against real broker processes:
 * - a broker SIGKILLed with transactions committed, aborted and still open
 *   restarts with read_committed reads that agree with the markers (the
 *   last stable offset and the aborted-transactions index are recovered
 *   from the log), and the open transaction is aborted by the next instance;
 * - read-process-write: a copier process (txn-copier.mjs) copies topic A to
 *   topic B in transactions, committing its input offsets in the same
 *   transaction, and is SIGKILLed at random moments (and restarted); a
 *   read_committed reader of B sees every record of A exactly once, in
 *   per-partition order; a read_uncommitted reader may see more;
 * - a zombie: a copier SIGSTOPped mid-copy while a replacement with the same
 *   transactional id takes over, then SIGCONTinued, is fenced and writes
 *   nothing a read_committed reader sees.
 */
import { MqClient } from '@mq/client';
import { cleanup, startBroker, uniqueName, waitFor } from './src/harness.js';
import { Copier, readTopic } from './src/txn-copier.js';

afterAll(async () => {
  await cleanup();
});

const readAll = readTopic;

describe('transactions across a broker SIGKILL', () => {
  it('read_committed agrees with the markers after recovery; the open transaction is aborted by the next instance', async () => {
    const broker = await startBroker({ args: ['--config-set', 'log.segment.bytes=2048', '--config-set', 'transaction.state.log.num.partitions=2'] });
    let client = new MqClient({ bootstrap: broker.bootstrap, clientId: 'txn-kill' });
    const topic = uniqueName('txn-kill');
    try {
      await client.admin().createTopic(topic, { numPartitions: 2 });
      const p = client.producer({ transactionalId: 'txn-kill', lingerMs: 0 });
      const expectCommitted: string[][] = [[], []];
      for (let i = 0; i < 12; i++) {
        await p.beginTransaction();
        const values = [0, 1].map((partition) => `t${i}-p${partition}-${'x'.repeat(200)}`);
        await Promise.all(values.map((value, partition) => p.send(topic, { value, partition })));
        if (i % 3 === 1) await p.abortTransaction();
        else {
          await p.commitTransaction();
          values.forEach((v, partition) => expectCommitted[partition]!.push(v));
        }
      }
      await p.beginTransaction();
      await Promise.all([0, 1].map((partition) => p.send(topic, { value: `open-p${partition}`, partition })));
      const plain = client.producer({ lingerMs: 0 });
      await plain.send(topic, { value: 'after-open', partition: 0 });
      await client.close();
      await broker.kill();
      await broker.restart();
      client = new MqClient({ bootstrap: broker.bootstrap, clientId: 'txn-kill' });
      // The open transaction still holds read_committed at its first offset; aborted ones are dropped.
      const before = await readAll(client, topic, 2, 'read_committed', 16, 1500);
      expect(before).toEqual(expectCommitted);
      const uncommitted = await readAll(client, topic, 2, 'read_uncommitted', 27);
      expect(uncommitted[0]).toHaveLength(12 + 1 + 1);
      expect(uncommitted[1]).toHaveLength(12 + 1);
      // The next instance fences the crashed one: its open transaction is aborted, and what follows it becomes stable.
      const next = client.producer({ transactionalId: 'txn-kill', lingerMs: 0 });
      await next.initTransactions();
      const after = await readAll(client, topic, 2, 'read_committed', 17);
      expect(after).toEqual([[...expectCommitted[0]!, 'after-open'], expectCommitted[1]]);
      await next.close();
    } finally {
      await client.close().catch(() => undefined);
      await broker.kill();
    }
  });
});

describe('read-process-write under SIGKILL', () => {
  it('a read_committed reader of B sees each record of A exactly once, in order, whenever the copier is killed', async () => {
    const broker = await startBroker({ args: ['--config-set', 'transaction.state.log.num.partitions=2', '--config-set', 'offsets.topic.num.partitions=2'] });
    const client = new MqClient({ bootstrap: broker.bootstrap, clientId: 'txn-rpw' });
    const source = uniqueName('txn-a');
    const dest = uniqueName('txn-b');
    const partitions = 2;
    const total = 2000;
    const copiers: Copier[] = [];
    try {
      await client.admin().createTopic(source, { numPartitions: partitions });
      await client.admin().createTopic(dest, { numPartitions: partitions });
      const producer = client.producer({ lingerMs: 0, idempotent: true });
      const expected: string[][] = Array.from({ length: partitions }, () => []);
      await Promise.all(
        Array.from({ length: total }, (_, i) => {
          const partition = i % partitions;
          const value = `r${i}`;
          expected[partition]!.push(value);
          return producer.send(source, { value, partition });
        }),
      );
      await producer.close();
      const config = { bootstrap: broker.bootstrap, source, dest, partitions, transactionalId: uniqueName('copier'), group: uniqueName('copier-group'), perTxn: 20 };
      // Kill at random moments (seeded, so a failure replays): before, during and after commits.
      let seed = 42;
      const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
      const kills = 6; // each copies at least 20 of the 2000 records, a few hundred at most, before it dies
      for (let k = 0; k < kills; k++) {
        const copier = new Copier(config);
        copiers.push(copier);
        await waitFor(() => copier.events.some((e) => e.ev === 'ready' || e.ev === 'error'), { timeout: 20_000, message: `copier ${k} ready` });
        // After a random amount of progress (some transactions committed), then a random moment within the next ones.
        const target = 20 + Math.floor(random() * 100);
        await waitFor(() => copier.committed >= target || copier.errors().length > 0, { timeout: 20_000, message: `copier ${k} progress` });
        await new Promise((r) => setTimeout(r, Math.floor(random() * 30)));
        await copier.kill();
      }
      const last = new Copier(config);
      copiers.push(last);
      const deadline = Date.now() + 60_000;
      let seen: string[][] = [];
      while (Date.now() < deadline) {
        seen = await readAll(client, dest, partitions, 'read_committed', total, 1500);
        if (seen.reduce((n, l) => n + l.length, 0) >= total) break;
        if (last.events.some((e) => e.ev === 'error')) break;
      }
      expect(last.errors()).toEqual([]);
      // The kills landed mid-copy: killed instances had committed transactions, and the last one resumed from their offsets.
      const killedCommits = copiers.slice(0, kills).reduce((n, c) => n + c.committed, 0);
      expect(killedCommits).toBeGreaterThan(0);
      expect(killedCommits).toBeLessThan(total);
      // Exactly once, in per-partition order.
      expect(seen).toEqual(expected);
      // The uncommitted view holds at least as much (aborted copies of killed instances may be there too).
      const raw = await readAll(client, dest, partitions, 'read_uncommitted', total, 1500);
      expect(raw.reduce((n, l) => n + l.length, 0)).toBeGreaterThanOrEqual(total);
      await last.kill();
    } finally {
      for (const c of copiers) await c.kill().catch(() => undefined);
      await client.close().catch(() => undefined);
      await broker.kill();
    }
  });

  it('a paused copier resumed after its replacement took over is fenced and writes nothing visible (a zombie)', async () => {
    const broker = await startBroker({ args: ['--config-set', 'transaction.state.log.num.partitions=2', '--config-set', 'offsets.topic.num.partitions=2'] });
    const client = new MqClient({ bootstrap: broker.bootstrap, clientId: 'txn-zombie' });
    const source = uniqueName('zombie-a');
    const dest = uniqueName('zombie-b');
    const partitions = 2;
    const total = 1000;
    const copiers: Copier[] = [];
    try {
      await client.admin().createTopic(source, { numPartitions: partitions });
      await client.admin().createTopic(dest, { numPartitions: partitions });
      const producer = client.producer({ lingerMs: 0, idempotent: true });
      const expected: string[][] = Array.from({ length: partitions }, () => []);
      await Promise.all(
        Array.from({ length: total }, (_, i) => {
          expected[i % partitions]!.push(`r${i}`);
          return producer.send(source, { value: `r${i}`, partition: i % partitions });
        }),
      );
      await producer.close();
      const config = { bootstrap: broker.bootstrap, source, dest, partitions, transactionalId: uniqueName('zombie-copier'), group: uniqueName('zombie-group'), perTxn: 10 };
      const zombie = new Copier(config);
      copiers.push(zombie);
      await waitFor(() => zombie.committed >= 50 || zombie.errors().length > 0, { timeout: 30_000, message: 'the first copier copies' });
      expect(zombie.errors()).toEqual([]);
      zombie.pause();
      // Lines it printed before it stopped may still be in the pipe.
      await new Promise((r) => setTimeout(r, 1000));
      const paused = zombie.committed;
      // The replacement fences it (InitProducerId bumps the epoch and aborts its open transaction) and copies the rest.
      const replacement = new Copier(config);
      copiers.push(replacement);
      const deadline = Date.now() + 60_000;
      let seen: string[][] = [];
      while (Date.now() < deadline) {
        seen = await readAll(client, dest, partitions, 'read_committed', total, 1500);
        if (seen.reduce((n, l) => n + l.length, 0) >= total || replacement.errors().length > 0) break;
      }
      expect(replacement.errors()).toEqual([]);
      expect(zombie.committed).toBe(paused);
      // Resumed, the zombie's next request carries its old epoch: refused, and it stops.
      zombie.resume();
      await waitFor(() => zombie.errors().length > 0, { timeout: 30_000, message: 'the resumed zombie is refused' });
      expect(zombie.errors()[0]!.code).toMatch(/^(PRODUCER_FENCED|INVALID_PRODUCER_EPOCH)$/);
      // It may report one commit more: one it had completed when it was stopped, before it printed it.
      expect(zombie.committed - paused).toBeLessThanOrEqual(config.perTxn);
      // Exactly once, in per-partition order: nothing the zombie sent before or after the pause is visible twice.
      expect(await readAll(client, dest, partitions, 'read_committed', total + 1, 1500)).toEqual(expected);
    } finally {
      for (const c of copiers) {
        c.resume();
        await c.kill().catch(() => undefined);
      }
      await client.close().catch(() => undefined);
      await broker.kill();
    }
  }, 180_000);
});

describe('a read_committed group member and offsets committed in an open transaction (KIP-447)', () => {
  it('waits for the transaction to end and starts at the offset it committed, not the one before', async () => {
    const broker = await startBroker({ args: ['--config-set', 'transaction.state.log.num.partitions=2', '--config-set', 'group.initial.rebalance.delay.ms=0'] });
    const client = new MqClient({ bootstrap: broker.bootstrap, clientId: 'txn-stable' });
    const topic = uniqueName('txn-stable');
    const group = uniqueName('g-stable');
    try {
      await client.admin().createTopic(topic, { numPartitions: 1 });
      const plain = client.producer({ lingerMs: 0 });
      for (let i = 0; i < 10; i++) await plain.send(topic, { value: `r${i}`, partition: 0 });
      // A copier's transaction has consumed records 0..6 and commits offset 7 with its output; it is still open.
      const copier = client.producer({ transactionalId: uniqueName('stable-copier'), lingerMs: 0 });
      await copier.beginTransaction();
      await copier.sendOffsetsToTransaction([{ topic, partition: 0, offset: 7 }], { groupId: group });
      const consumer = client.consumer({ groupId: group, autoOffsetReset: 'earliest', isolationLevel: 'read_committed', sessionTimeoutMs: 6000, heartbeatIntervalMs: 500 });
      let assigned = false;
      consumer.subscribe([topic], { onPartitionsAssigned: () => void (assigned = true) });
      const seen: string[] = [];
      const polling = (async () => {
        const until = Date.now() + 30_000;
        while (Date.now() < until && seen.length < 3) for (const r of await consumer.poll(200)) seen.push(r.value!.toString());
      })();
      // Assigned, but the committed offset is unstable: nothing is read from the offset before it (none: earliest).
      await waitFor(() => assigned, { timeout: 20_000, message: 'the consumer was not assigned the partition' });
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(seen).toEqual([]);
      await copier.commitTransaction();
      await polling;
      expect(seen).toEqual(['r7', 'r8', 'r9']);
      await consumer.close();
      await copier.close();
    } finally {
      await client.close().catch(() => undefined);
      await broker.kill();
    }
  });
});
