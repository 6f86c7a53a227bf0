/**
 * Scrape-time metrics of one broker node: its connections, the partition replicas it hosts (offsets, bytes,
 * segments, leadership, ISR health), the produce purgatory, the controller's Raft state, the leader elections and
 * ISR changes the metadata log records, and the lag of the consumer groups this broker coordinates. Everything is
 * read when Prometheus scrapes; nothing here runs on the request path.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PartitionView } from '../http/routes/system.js';
import { counterOf } from './broker-metrics.js';

export interface MetricsController {
  status(): { active: boolean; controllerId: number; raftTerm: number; raftCommit: number; applied: number; raftElections: number; controllerChanges: number };
  readonly metadata: {
    topics(): ReadonlyArray<{ name: string; partitions: ReadonlyArray<{ leader: number; leaderEpoch: number; isr: readonly number[]; replicas: readonly number[] }> }>;
    topic(name: string): { partitions: ReadonlyArray<{ leader: number; leaderEpoch: number; isr: readonly number[]; replicas: readonly number[] }> } | undefined;
    onChange(fn: (delta: { topics: readonly string[]; deletedTopics: readonly { name: string }[]; uncleanElections: readonly unknown[] }) => void): () => void;
  };
}

export interface MetricsGroups {
  listGroups(req: { statesFilter: string[] }): Promise<{ groups?: Array<{ groupId?: string | null }> | null }>;
  summarize(groupId: string): { state: string; members: unknown[]; offsets: Array<{ topic: string; partition: number; lag: number | null }> };
}

export interface NodeMetricSources {
  connections(): number;
  view: PartitionView;
  controller: MetricsController;
  groups(): MetricsGroups | undefined;
  /** A topic was deleted: per-topic series kept elsewhere (bytes in/out) are dropped. */
  forgetTopic?(name: string): void;
}

/** Group series (members per group, lag per group partition) are bounded: past this many the rest are left out of a scrape. */
export const MAX_GROUP_SERIES = 10_000;

type PartitionShape = { leader: number; leaderEpoch: number; isr: readonly number[] };

/**
 * Registers the node's gauges and its metadata-change counters on `registry`; returns the unsubscribe for the
 * metadata listener (call it when the broker closes).
 */
export function registerNodeMetrics(registry: Registry, s: NodeMetricSources): () => void {
  const r = [registry];
  new Gauge({ name: 'mq_connections', help: 'Open client WebSocket connections.', registers: r, collect() { this.set(s.connections()); } });
  new Gauge({ name: 'mq_topics', help: 'Topics of the cluster.', registers: r, collect() { this.set(s.view.topicCount()); } });

  const perPartition = (name: string, help: string, read: (p: ReturnType<PartitionView['partitions']>[number]) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['topic', 'partition'],
      registers: r,
      collect() {
        this.reset();
        for (const p of s.view.partitions()) this.set({ topic: p.topic, partition: String(p.partition) }, read(p));
      },
    });
  perPartition('mq_partition_high_watermark', 'High watermark per partition replica on this broker.', (p) => p.highWatermark);
  perPartition('mq_partition_log_start_offset', 'Log start offset per partition replica.', (p) => p.logStartOffset);
  perPartition('mq_partition_size_bytes', 'Bytes on disk per partition replica.', (p) => p.sizeBytes);
  perPartition('mq_partition_segments', 'Log segments per partition replica.', (p) => p.segments);
  perPartition('mq_partition_leader', '1 when this broker leads the partition.', (p) => (p.leader ? 1 : 0));

  const led = () => s.view.partitions().filter((p) => p.leader);
  new Gauge({ name: 'mq_leader_partitions', help: 'Partitions this broker leads.', registers: r, collect() { this.set(led().length); } });
  new Gauge({
    name: 'mq_under_replicated_partitions',
    help: 'Partitions led by this broker whose ISR is smaller than their replica set.',
    registers: r,
    collect() { this.set(led().filter((p) => p.isrSize < p.replicaCount).length); },
  });
  new Gauge({
    name: 'mq_under_min_isr_partitions',
    help: 'Partitions led by this broker whose ISR is smaller than their min.insync.replicas (acks=all produce is refused).',
    registers: r,
    collect() { this.set(led().filter((p) => p.isrSize < p.minIsr).length); },
  });
  new Gauge({
    name: 'mq_produce_purgatory_size',
    help: 'acks=all produce requests waiting for their ISR, over the partitions this broker leads.',
    registers: r,
    collect() { this.set(led().reduce((n, p) => n + p.pendingProduces, 0)); },
  });
  new Gauge({
    name: 'mq_offline_partitions',
    help: 'Partitions of the cluster without a leader (reported by the active controller only; 0 elsewhere).',
    registers: r,
    collect() {
      if (!s.controller.status().active) return void this.set(0);
      let n = 0;
      for (const t of s.controller.metadata.topics()) for (const p of t.partitions) if (p.leader < 0) n++;
      this.set(n);
    },
  });

  // Controller and Raft state.
  new Gauge({ name: 'mq_controller_active', help: '1 when this process is the active controller.', registers: r, collect() { this.set(s.controller.status().active ? 1 : 0); } });
  new Gauge({ name: 'mq_controller_id', help: 'The active controller this broker knows (-1: none).', registers: r, collect() { this.set(s.controller.status().controllerId); } });
  new Gauge({ name: 'mq_raft_term', help: 'Raft term of the metadata log as this process knows it.', registers: r, collect() { this.set(s.controller.status().raftTerm); } });
  new Gauge({ name: 'mq_raft_commit_index', help: 'Raft commit index of the metadata log.', registers: r, collect() { this.set(s.controller.status().raftCommit); } });
  counterOf(registry, 'mq_raft_elections_total', 'Metadata-quorum elections this process started as a candidate (0 on a broker-only process).', () => s.controller.status().raftElections);
  counterOf(registry, 'mq_controller_changes_total', 'Times this process learned of a new active controller (etcd\'s leader_changes_seen).', () => s.controller.status().controllerChanges);
  new Gauge({ name: 'mq_metadata_applied_index', help: 'Last metadata log entry applied by this broker.', registers: r, collect() { this.set(s.controller.status().applied); } });

  // What the metadata log records, as this broker replays it (the same on every broker of the cluster).
  const elections = new Counter({ name: 'mq_leader_elections_total', help: 'Partition leader changes recorded in the metadata log since this broker started.', registers: r });
  const unclean = new Counter({ name: 'mq_unclean_leader_elections_total', help: 'Leaders chosen outside the ISR recorded in the metadata log since this broker started.', registers: r });
  const shrinks = new Counter({ name: 'mq_isr_shrinks_total', help: 'ISR shrinks recorded in the metadata log since this broker started.', registers: r });
  const expands = new Counter({ name: 'mq_isr_expands_total', help: 'ISR expansions recorded in the metadata log since this broker started.', registers: r });
  const known = new Map<string, PartitionShape[]>();
  const shapeOf = (name: string) => s.controller.metadata.topic(name)?.partitions.map((p) => ({ leader: p.leader, leaderEpoch: p.leaderEpoch, isr: [...p.isr] }));
  for (const t of s.controller.metadata.topics()) known.set(t.name, shapeOf(t.name)!);
  const unsubscribe = s.controller.metadata.onChange((delta) => {
    for (const d of delta.deletedTopics) {
      known.delete(d.name);
      s.forgetTopic?.(d.name);
    }
    unclean.inc(delta.uncleanElections.length);
    for (const name of delta.topics) {
      const now = shapeOf(name);
      if (!now) continue;
      const before = known.get(name);
      known.set(name, now);
      if (!before) continue;
      now.forEach((p, i) => {
        const b = before[i];
        if (!b) return;
        if (p.leaderEpoch > b.leaderEpoch && p.leader >= 0 && p.leader !== b.leader) elections.inc();
        if (p.isr.length < b.isr.length) shrinks.inc();
        else if (p.isr.length > b.isr.length) expands.inc();
      });
    }
  });

  // Consumer groups this broker coordinates: one pass over them per scrape (prom-client collects every metric at
  // once, so both gauges share the pass in flight) fills both gauges.
  type GroupsPass = { members: Array<[string, number]>; lags: Array<[string, string, number, number]> };
  let inFlight: Promise<GroupsPass> | undefined;
  const groupsPass = (): Promise<GroupsPass> =>
    (inFlight ??= (async () => {
      const out: GroupsPass = { members: [], lags: [] };
      const g = s.groups();
      if (!g) return out;
      const listed = await g.listGroups({ statesFilter: [] });
      for (const { groupId } of listed.groups ?? []) {
        if (!groupId || out.members.length + out.lags.length >= MAX_GROUP_SERIES) continue;
        let summary;
        try {
          summary = g.summarize(groupId);
        } catch {
          continue; // moved or deleted since the list
        }
        out.members.push([groupId, summary.members.length]);
        for (const o of summary.offsets) if (o.lag !== null && out.members.length + out.lags.length < MAX_GROUP_SERIES) out.lags.push([groupId, o.topic, o.partition, o.lag]);
      }
      return out;
    })().finally(() => (inFlight = undefined)));
  new Gauge({
    name: 'mq_group_members',
    help: 'Members of each group this broker coordinates.',
    labelNames: ['group'],
    registers: r,
    async collect() {
      this.reset();
      for (const [group, n] of (await groupsPass()).members) this.set({ group }, n);
    },
  });
  new Gauge({
    name: 'mq_group_lag',
    help: 'Records between a group\'s committed offset and the log end, per partition, for the groups this broker coordinates.',
    labelNames: ['group', 'topic', 'partition'],
    registers: r,
    async collect() {
      this.reset();
      for (const [group, topic, partition, lag] of (await groupsPass()).lags) this.set({ group, topic, partition: String(partition) }, lag);
    },
  });
  return unsubscribe;
}
