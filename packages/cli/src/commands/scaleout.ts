/**
 * Scale-out commands: `mq topic reassign` (start, --status, --cancel),
 * `mq cluster elect-leaders`, `mq cluster rebalance` and
 * `mq broker decommission`, over the admin API of @mq/client.
 */
import type { Argv, CommandModule } from 'yargs';
import { planRebalance, type MqClient, type OngoingReassignment } from '@mq/client';
import { writeLine, type CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { list, table } from '../output.js';
import { intFlag, intOption, withClient, withClientOptions, withFormat, out, type ClientArgs, type FormatArgs } from '../options.js';

type Args = ClientArgs & FormatArgs;

/** `1,4,5` → [1, 4, 5] (broker ids, each an integer >= 1). */
export function parseReplicaList(raw: unknown): number[] {
  const s = String(raw ?? '').trim();
  if (s === '') throw new UsageError('--replicas needs a comma-separated list of broker ids, e.g. --replicas 1,4,5');
  return s.split(',').map((x) => {
    const t = x.trim();
    const n = /^\d+$/.test(t) ? Number(t) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--replicas: "${t}" is not a broker id (an integer >= 1)`);
    return n;
  });
}

function progressText(r: OngoingReassignment): string {
  if (!r.progress) return '?';
  return r.progress.adding.map((a) => `${a.brokerId}:${a.inIsr ? 'in-sync' : `lag ${a.offsetLag} (~${a.bytesBehind} B)`}`).join(' ') || '-';
}

function statusTable(rs: readonly OngoingReassignment[]): string {
  if (rs.length === 0) return 'no reassignment in progress';
  return table(
    ['TOPIC', 'PARTITION', 'REPLICAS', 'TARGET', 'ADDING', 'REMOVING', 'LEADER', 'ISR', 'PROGRESS'],
    rs.map((r) => [r.topic, String(r.partition), list(r.replicas), list(r.targetReplicas), list(r.addingReplicas), list(r.removingReplicas), String(r.leader), list(r.isr), progressText(r)]),
  );
}

/** Waits until none of `keys` (topic-partition) is being reassigned any more, or `timeoutMs`. */
export async function waitForMoves(c: MqClient, keys: ReadonlySet<string>, timeoutMs: number, onPoll?: (left: OngoingReassignment[]) => void | Promise<void>): Promise<OngoingReassignment[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = (await c.admin().listPartitionReassignments()).filter((r) => keys.has(`${r.topic}\u0000${r.partition}`));
    if (left.length === 0 || Date.now() >= deadline) return left;
    await onPoll?.(left);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export function reassignCommand(ctx: CliContext): CommandModule {
  type A = Args & { name?: string; partition?: number; replicas?: string; status: boolean; cancel: boolean; 'allow-rf-change': boolean; wait: boolean; 'wait-timeout-ms': number };
  const cmd: CommandModule<object, A> = {
    command: 'reassign [name]',
    describe: "move a partition's replicas to other brokers (--status: the moves in progress; --cancel: restore the original replicas)",
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('name', { type: 'string', describe: 'topic' })
        .option('partition', { alias: 'p', ...intOption('--partition', 0, 'the partition to move') })
        .option('replicas', { alias: 'r', type: 'string', requiresArg: true, describe: 'the new replica set, preferred leader first, e.g. 1,4,5' })
        .option('status', { type: 'boolean', default: false, describe: 'list the reassignments in progress with their progress' })
        .option('cancel', { type: 'boolean', default: false, describe: "cancel the partition's reassignment: its original replicas are restored" })
        .option('allow-rf-change', { type: 'boolean', default: false, describe: 'allow a replica count other than the current replication factor' })
        .option('wait', { type: 'boolean', default: false, describe: 'wait until the move has completed' })
        .option('wait-timeout-ms', { ...intOption('--wait-timeout-ms', 1, 'how long --wait waits', 600_000) }) as unknown as Argv<A>,
    handler: async (args) => {
      if (args.status) {
        const rs = await withClient(args, (c) => c.admin().listPartitionReassignments(args.name ? [args.name] : []));
        await out(ctx, args, { reassignments: rs }, () => statusTable(rs));
        return;
      }
      if (!args.name) throw new UsageError('name the topic: mq topic reassign <topic> --partition P --replicas 1,4,5');
      if (args.partition === undefined) throw new UsageError('give the partition: --partition P');
      const topic = args.name;
      const partition = args.partition;
      if (args.cancel) {
        if (args.replicas !== undefined) throw new UsageError('--cancel takes no --replicas (it restores the original ones)');
        await withClient(args, (c) => c.admin().cancelPartitionReassignment(topic, partition));
        await out(ctx, args, { topic, partition, cancelled: true }, () => `cancelled the reassignment of ${topic}-${partition}: its original replicas are restored`);
        return;
      }
      if (args.replicas === undefined) throw new UsageError('give the new replicas: --replicas 1,4,5 (or --status, or --cancel)');
      const replicas = parseReplicaList(args.replicas);
      const left = await withClient(args, async (c) => {
        await c.admin().reassignPartition(topic, partition, replicas, { allowReplicationFactorChange: args['allow-rf-change'] });
        if (!args.wait) return undefined;
        return waitForMoves(c, new Set([`${topic}\u0000${partition}`]), args['wait-timeout-ms'], async (l) => {
          if (args.format !== 'json') await writeLine(ctx.stdout, `moving: ${progressText(l[0]!)}`);
        });
      });
      if (left && left.length > 0) throw new UsageError(`${topic}-${partition} is still moving after ${args['wait-timeout-ms']} ms (see mq topic reassign --status)`);
      await out(ctx, args, { topic, partition, replicas, done: args.wait }, () =>
        args.wait ? `${topic}-${partition} now has replicas ${list(replicas)}` : `reassigning ${topic}-${partition} to ${list(replicas)} (follow it with: mq topic reassign --status)`,
      );
    },
  };
  return cmd as unknown as CommandModule;
}

export function electLeadersCommand(ctx: CliContext): CommandModule {
  type A = Args & { topic?: string; partition?: number };
  const cmd: CommandModule<object, A> = {
    command: 'elect-leaders',
    describe: 'move leadership back to each partition\'s preferred replica where it is alive and in sync',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .option('topic', { alias: 't', type: 'string', requiresArg: true, describe: 'only this topic (default: every topic)' })
        .option('partition', { alias: 'p', ...intOption('--partition', 0, 'only this partition of --topic') }) as unknown as Argv<A>,
    handler: async (args) => {
      if (args.partition !== undefined && !args.topic) throw new UsageError('--partition needs --topic');
      const topics = args.topic ? [{ topic: args.topic, ...(args.partition !== undefined ? { partitions: [args.partition] } : {}) }] : undefined;
      const r = await withClient(args, (c) => c.admin().electLeaders(topics));
      const rows = r.results.map((x) => ({ topic: x.topic, partition: x.partition, error: x.error?.code ?? null, message: x.error?.message ?? '' }));
      await out(ctx, args, { moved: r.moved, results: rows }, () =>
        [`moved leadership of ${r.moved} partition(s) to their preferred replica`, ...(rows.length ? [table(['TOPIC', 'PARTITION', 'RESULT'], rows.map((x) => [x.topic, String(x.partition), x.error ?? 'elected']))] : [])].join('\n'),
      );
    },
  };
  return cmd as unknown as CommandModule;
}

export function decommissionCommand(ctx: CliContext): CommandModule {
  type A = Args & { id: number; cancel: boolean; wait: boolean; 'wait-timeout-ms': number };
  const cmd: CommandModule<object, A> = {
    command: 'decommission <id>',
    describe: 'move every replica off a broker so that it can be stopped (refused when the others cannot hold the replication factor)',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('id', { type: 'string', demandOption: true, describe: 'broker id', coerce: (v: unknown) => parseReplicaList(v)[0]! })
        .option('cancel', { type: 'boolean', default: false, describe: 'the broker takes replicas again' })
        .option('wait', { type: 'boolean', default: true, describe: 'wait until no replica is left on it' })
        .option('wait-timeout-ms', { ...intOption('--wait-timeout-ms', 1, 'how long to wait', 600_000) }) as unknown as Argv<A>,
    handler: async (args) => {
      const id = args.id;
      const r = await withClient(args, async (c) => {
        let res = await c.admin().decommissionBroker(id, { cancel: args.cancel });
        if (args.cancel || !args.wait) return res;
        const deadline = Date.now() + args['wait-timeout-ms'];
        while (res.remainingReplicas > 0 && Date.now() < deadline) {
          if (args.format !== 'json') await writeLine(ctx.stdout, `broker ${id}: ${res.remainingReplicas} replica(s) left`);
          await new Promise((done) => setTimeout(done, 1000));
          // Asking again starts the moves of partitions that were moving before (idempotent otherwise).
          res = await c.admin().decommissionBroker(id);
        }
        return res;
      });
      const failed = r.moves.filter((m) => m.error);
      await out(ctx, args, { broker: id, cancelled: args.cancel, remainingReplicas: r.remainingReplicas, moves: r.moves.map((m) => ({ topic: m.topic, partition: m.partition, error: m.error?.code ?? null })) }, () =>
        args.cancel
          ? `broker ${id} takes replicas again`
          : r.remainingReplicas === 0
            ? `broker ${id} holds no replica any more: it can be stopped`
            : `broker ${id}: ${r.remainingReplicas} replica(s) still to move${failed.length ? ` (${failed.map((f) => `${f.topic}-${f.partition}: ${f.error!.message}`).join('; ')})` : ''}`,
      );
      if (!args.cancel && args.wait && r.remainingReplicas > 0) throw new UsageError(`broker ${id} still holds ${r.remainingReplicas} replica(s) after ${args['wait-timeout-ms']} ms`);
    },
  };
  return cmd as unknown as CommandModule;
}

/**
 * `mq cluster rebalance`: the plan is computed here, over the admin API
 * (@mq/client planRebalance, from the live brokers and every topic's
 * replicas), and executed as reassignments, at most --concurrency replica
 * moves in flight; then the leader-order changes and a preferred-leader
 * election. The controller keeps no plan: a rebalance cut short (Ctrl-C, a
 * lost connection) leaves only finished or in-progress moves, and running it
 * again plans from what is there.
 */
export function rebalanceCommand(ctx: CliContext): CommandModule {
  type A = Args & { 'dry-run': boolean; 'max-moves'?: number; concurrency: number; throttle?: number; 'wait-timeout-ms': number; 'reserve-bytes': number };
  const cmd: CommandModule<object, A> = {
    command: 'rebalance',
    describe: 'even out replicas and leaders per broker (moving as few replicas as possible)',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .option('dry-run', { type: 'boolean', default: false, describe: 'print the plan without executing it' })
        .option('max-moves', { ...intOption('--max-moves', 1, 'the most replica moves to plan (run again for the rest)') })
        .option('concurrency', { ...intOption('--concurrency', 1, 'replica moves in flight at once', 2) })
        .option('throttle', { ...intOption('--throttle', 0, 'replication throttle of the moves, bytes/s per broker (0: none); the previous one is restored afterwards') })
        .option('wait-timeout-ms', { ...intOption('--wait-timeout-ms', 1, 'how long each step may take', 600_000) })
        .option('reserve-bytes', { ...intOption('--reserve-bytes', 0, 'disk bytes to keep free on each broker: no replica moves to a broker with less room than its size plus this', 0) }) as unknown as Argv<A>,
    handler: async (args) => {
      const started = Date.now();
      const result = await withClient(args, async (c) => {
        const admin = c.admin();
        const cluster = await admin.describeCluster();
        const live = cluster.brokers.filter((b) => !b.fenced);
        // Disk-aware: each broker's free bytes and its replicas' sizes (DescribeLogDirs); a broker that does not answer is not limited.
        const dirs = await Promise.all(live.map((b) => admin.describeLogDirs(b.id).catch(() => undefined)));
        const brokers = live.map((b, i) => ({ id: b.id, rack: b.rack, ...(dirs[i] && dirs[i].usableBytes >= 0 ? { freeBytes: dirs[i].usableBytes } : {}) }));
        const sizes = new Map<string, number>();
        for (const d of dirs) for (const r of d?.replicas ?? []) if (r.leader) sizes.set(`${r.topic}\u0000${r.partition}`, r.sizeBytes);
        const moving = new Set((await admin.listPartitionReassignments()).map((r) => `${r.topic}\u0000${r.partition}`));
        const names = await admin.listTopics();
        const topics = names.length ? await admin.describeTopics(names) : [];
        const partitions = topics.flatMap((t) =>
          t.partitions.map((p) => {
            const k = `${t.name}\u0000${p.partition}`;
            return { topic: t.name, partition: p.partition, replicas: p.replicas, moving: moving.has(k), ...(sizes.has(k) ? { sizeBytes: sizes.get(k)! } : {}) };
          }),
        );
        const plan = planRebalance(brokers, partitions, { ...(args['max-moves'] !== undefined ? { maxMoves: args['max-moves'] } : {}), reserveBytes: args['reserve-bytes'] });
        if (plan.noRoom.length > 0 && args.format !== 'json') {
          await writeLine(ctx.stderr, `broker(s) ${plan.noRoom.join(', ')} lack the disk room for some of the replicas the plan would move there (free bytes less --reserve-bytes ${args['reserve-bytes']}): the plan leaves them less loaded`);
        }
        if (args.format !== 'json') {
          await writeLine(ctx.stdout, plan.moves.length === 0 ? 'the cluster is balanced: nothing to move' : table(['TOPIC', 'PARTITION', 'FROM', 'TO', 'KIND'], plan.moves.map((m) => [m.topic, String(m.partition), list(m.from), list(m.to), m.kind])));
        }
        if (args['dry-run'] || plan.moves.length === 0) return { plan, executed: false, elected: 0 };
        const replicaMoves = plan.moves.filter((m) => m.kind === 'replica');
        const previous = args.throttle !== undefined && replicaMoves.length > 0 ? (await admin.replicationThrottle(args.throttle)).previous : undefined;
        try {
          for (let i = 0; i < replicaMoves.length; i += args.concurrency) {
            const step = replicaMoves.slice(i, i + args.concurrency);
            await admin.alterPartitionReassignments(step.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.to })));
            const left = await waitForMoves(c, new Set(step.map((m) => `${m.topic}\u0000${m.partition}`)), args['wait-timeout-ms']);
            if (left.length > 0) throw new UsageError(`step ${i / args.concurrency + 1}: ${left.map((l) => `${l.topic}-${l.partition}`).join(', ')} still moving after ${args['wait-timeout-ms']} ms (see mq topic reassign --status)`);
            if (args.format !== 'json') await writeLine(ctx.stdout, `moved ${Math.min(i + args.concurrency, replicaMoves.length)}/${replicaMoves.length} replica(s)`);
          }
        } finally {
          if (previous !== undefined) await admin.replicationThrottle(previous);
        }
        const reorders = plan.moves.filter((m) => m.kind === 'leader');
        if (reorders.length > 0) await admin.alterPartitionReassignments(reorders.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.to })));
        const { moved } = await admin.electLeaders();
        return { plan, executed: true, elected: moved };
      });
      const ms = Date.now() - started;
      await out(ctx, args, { dryRun: args['dry-run'], moves: result.plan.moves, before: result.plan.before, after: result.plan.after, noRoom: result.plan.noRoom, executed: result.executed, leadersElected: result.elected, ms }, () =>
        result.executed
          ? `rebalanced in ${ms} ms: ${result.plan.moves.filter((m) => m.kind === 'replica').length} replica move(s), ${result.plan.moves.filter((m) => m.kind === 'leader').length} leader-order change(s), ${result.elected} leader(s) elected\n` +
            table(['BROKER', 'REPLICAS', 'LEADERS'], Object.entries(result.plan.after).map(([id, v]) => [id, String(v.replicas), String(v.leaders)]))
          : args['dry-run'] && result.plan.moves.length > 0
            ? '(dry run: nothing moved)'
            : '',
      );
    },
  };
  return cmd as unknown as CommandModule;
}

/** `mq cluster throttle [BYTES_PER_S]`: shows or sets the replication throttle of reassignment moves. */
export function throttleCommand(ctx: CliContext): CommandModule {
  type A = Args & { rate?: number };
  const cmd: CommandModule<object, A> = {
    command: 'throttle [rate]',
    describe: 'show or set the replication throttle of reassignment moves (bytes/s per broker; 0: none), effective at once',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env)).positional('rate', { type: 'string', describe: 'bytes per second (0: no limit)', coerce: (v: unknown) => intFlag('rate', 0)(v) }) as unknown as Argv<A>,
    handler: async (args) => {
      const r = await withClient(args, (c) => c.admin().replicationThrottle(args.rate));
      await out(ctx, args, r, () =>
        args.rate === undefined
          ? `replication throttle: ${r.bytesPerSec === 0 ? 'none' : `${r.bytesPerSec} bytes/s per broker`}`
          : `replication throttle set to ${r.bytesPerSec === 0 ? 'none' : `${r.bytesPerSec} bytes/s per broker`} (was ${r.previous === 0 ? 'none' : r.previous})`,
      );
    },
  };
  return cmd as unknown as CommandModule;
}
