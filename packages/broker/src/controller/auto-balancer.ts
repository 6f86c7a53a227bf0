/**
 * The active controller's own partition balancer (Redpanda's partition
 * autobalancing; off by default, as there): `partition.autobalancing.mode`
 * - `off`: only `mq cluster rebalance` and decommission move replicas;
 * - `node_add`: when a broker joins (a registration this controller has not
 *   seen, or a live broker holding no replica while others hold some), it
 *   evens out replicas per broker until the plan is empty;
 * - `continuous`: that, whenever replicas per broker are uneven, and the
 *   replicas of a broker unavailable (fenced) for longer than
 *   `partition.autobalancing.node.availability.timeout.ms` move to the live
 *   ones (refused, with one warning, while they cannot hold the replication
 *   factor).
 * The plan is the one `mq cluster rebalance` runs (`planRebalance` of
 * @mq/client: fewest moves, rack-aware); it is executed in bounded steps:
 * never more than `partition.autobalancing.max.concurrent.moves` partitions
 * moving at once (moves started by anyone count). The moves are ordinary
 * reassignments in the metadata log, so a controller failover loses no
 * move; it restarts the unavailability clock of `continuous` (a new active
 * controller counts a broker's silence from its own start) and ends a
 * `node_add` episode (an empty broker starts a new one). Unlike the CLI's
 * plan it counts replicas, not bytes: it is not disk-aware.
 */
import { planRebalance, type PlannedReassignment } from '@mq/client';
import type { Logger } from '@mq/protocol/components';
import { planDecommission, type PlannedMove } from './balance.js';
import type { MetadataState } from './metadata-state.js';

export type AutoBalanceMode = 'off' | 'node_add' | 'continuous';
export const AUTO_BALANCE_MODES: readonly AutoBalanceMode[] = ['off', 'node_add', 'continuous'];

export interface AutoBalanceOptions {
  mode: AutoBalanceMode;
  /** Partitions moving at once, at most (moves in progress count). */
  maxConcurrentMoves: number;
  /** continuous: a broker fenced for longer than this has its replicas moved off it. */
  nodeAvailabilityTimeoutMs: number;
  /** How often the active controller looks. */
  checkIntervalMs: number;
}

export const DEFAULT_AUTO_BALANCE: AutoBalanceOptions = Object.freeze({ mode: 'off', maxConcurrentMoves: 4, nodeAvailabilityTimeoutMs: 900_000, checkIntervalMs: 10_000 });

export interface AutoBalanceStep {
  moves: PlannedMove[];
  /** Moves in progress onto a broker unavailable past the timeout: they cannot complete, so they are cancelled. */
  cancels?: Array<{ topic: string; partition: number }>;
  why: string;
}

/** One entry of the AlterReassignments command the controller submits (null replicas: cancel). */
export interface AutoBalanceChange {
  topic: string;
  partition: number;
  replicas: number[] | null;
}

/**
 * The next moves (pure): replicas off brokers unavailable too long first
 * (continuous), then the count-evening plan; none while the cap is reached.
 * `unavailableForMs(id)`: how long a fenced broker has been unavailable.
 */
export function planAutoBalance(md: MetadataState, options: AutoBalanceOptions, unavailableForMs: (id: number) => number): AutoBalanceStep {
  const moving = md.reassignments();
  if (options.mode === 'off') return { moves: [], why: '' };
  const holds = (id: number) => md.topics().some((t) => t.partitions.some((p) => (p.targetReplicas ?? p.replicas).includes(id)));
  const down = md.brokers().filter((b) => b.fenced && !b.decommissioned && holds(b.id));
  const gone = down.filter((b) => options.mode === 'continuous' && unavailableForMs(b.id) > options.nodeAvailabilityTimeoutMs);
  // A move adding a replica on a broker gone past the timeout never completes: cancelled first (whatever the cap).
  const stuck = moving.filter((m) => gone.some((b) => m.record.adding?.includes(b.id)));
  if (stuck.length > 0) {
    return { moves: [], cancels: stuck.map((m) => ({ topic: m.topic, partition: m.partition })), why: `moves onto broker(s) ${gone.map((b) => b.id).join(', ')}, unavailable for more than ${options.nodeAvailabilityTimeoutMs} ms, cannot complete` };
  }
  const room = options.maxConcurrentMoves - moving.length;
  if (room <= 0) return { moves: [], why: '' };
  for (const b of gone) {
    // Throws INVALID_REPLICATION_FACTOR when the live brokers cannot hold the replicas: the caller warns.
    const { moves } = planDecommission(md, b.id);
    if (moves.length > 0) return { moves: moves.slice(0, room), why: `broker ${b.id} has been unavailable for more than ${options.nodeAvailabilityTimeoutMs} ms` };
  }
  // A broker that is down but may come back keeps its replicas: no count balancing around it (the plan would empty it).
  if (down.length > 0) return { moves: [], why: '' };
  const brokers = md.placeable().map((b) => ({ id: b.id, rack: b.rack }));
  if (brokers.length < 2) return { moves: [], why: '' };
  const busy = new Set(moving.map((m) => `${m.topic}\u0000${m.partition}`));
  const partitions = md.topics().flatMap((t) =>
    t.partitions.map((p, partition) => ({ topic: t.name, partition, replicas: p.replicas, moving: busy.has(`${t.name}\u0000${partition}`) })),
  );
  const plan = planRebalance(brokers, partitions, { maxMoves: room });
  const replicaMoves = plan.moves.filter((m) => m.kind === 'replica');
  // Leader-order changes copy nothing: only once every replica is where it should be (then the preferred-leader election follows).
  const chosen: PlannedReassignment[] = replicaMoves.length > 0 ? replicaMoves : moving.length === 0 ? plan.moves : [];
  return { moves: chosen.slice(0, room).map((m) => ({ topic: m.topic, partition: m.partition, from: m.from, to: m.to })), why: 'replicas or preferred leaders per broker are uneven' };
}

/** The balancer's state across checks of one active controller. */
export class AutoBalancer {
  #known = new Set<number>();
  /** Live brokers holding no replica at the last check. */
  #empty = new Set<number>();
  #episode = false;
  #lastCheck = -Infinity;
  #lastRefusal = '';

  constructor(
    readonly options: AutoBalanceOptions,
    private readonly logger: Logger,
  ) {}

  /** This voter became the active controller: the brokers it knows now are not new. */
  activate(md: MetadataState, now: number): void {
    this.#known = new Set(md.brokers().map((b) => b.id));
    this.#empty = new Set();
    this.#episode = false;
    this.#lastCheck = now;
  }

  /** One look (when due): the moves to submit now, if any. */
  check(md: MetadataState, now: number, unavailableForMs: (id: number) => number): AutoBalanceChange[] {
    if (this.options.mode === 'off' || now - this.#lastCheck < this.options.checkIntervalMs) return [];
    this.#lastCheck = now;
    // A broker joins: a registration not seen before, or a live broker holding no replica while others hold some
    // (one that came back with an empty disk, or was down when the topics were created).
    const holding = new Set<number>();
    for (const t of md.topics()) for (const p of t.partitions) for (const id of p.targetReplicas ?? p.replicas) holding.add(id);
    const emptyNow = new Set<number>();
    for (const b of md.brokers()) {
      const fresh = !this.#known.has(b.id);
      this.#known.add(b.id);
      const empty = holding.size > 0 && !b.fenced && !b.decommissioned && !holding.has(b.id);
      if (empty) emptyNow.add(b.id);
      // An empty broker starts an episode once when it becomes empty (not at every check while the plan cannot give it anything).
      if ((fresh || (empty && !this.#empty.has(b.id))) && !this.#episode) {
        this.#episode = true;
        this.logger.info({ broker: b.id, mode: this.options.mode }, `broker ${b.id} joined${empty ? ' (it holds no replica)' : ''}: balancing partitions onto it`);
      }
    }
    this.#empty = emptyNow;
    if (this.options.mode === 'node_add' && !this.#episode) return [];
    let step: AutoBalanceStep;
    try {
      step = planAutoBalance(md, this.options, unavailableForMs);
    } catch (err) {
      const message = (err as Error).message;
      if (message !== this.#lastRefusal) this.logger.warn({ err: message }, 'partition autobalancing cannot move the replicas of an unavailable broker');
      this.#lastRefusal = message;
      return [];
    }
    this.#lastRefusal = '';
    if (step.cancels && step.cancels.length > 0) {
      this.logger.warn({ partitions: step.cancels.map((c) => `${c.topic}-${c.partition}`) }, `partition autobalancing: cancelling ${step.why}`);
      return step.cancels.map((c) => ({ ...c, replicas: null }));
    }
    if (step.moves.length === 0) {
      if (this.#episode && md.reassignments().length === 0) {
        this.#episode = false;
        if (this.options.mode === 'node_add') this.logger.info({}, 'partition autobalancing: the cluster is balanced');
      }
      return [];
    }
    this.logger.info({ moves: step.moves.length, partitions: step.moves.map((m) => `${m.topic}-${m.partition}`) }, `partition autobalancing: ${step.why}`);
    return step.moves.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.to }));
  }
}
