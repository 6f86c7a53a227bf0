/**
 * The scripted nemesis of `--script stale-epoch`: one broker's metadata is
 * held back while a partition's leadership goes away from its leader and
 * back (two leader epochs, by the operator's own tools: a reordering
 * reassignment and a preferred-leader election, each twice), so that broker
 * sees the partition's leader epoch jump by two with the same leader, which
 * the random nemesis practically never arranges (README: Does it find bugs?).
 *
 * - `follower`: the held-back broker F follows the partition from its leader
 *   L and its frames to L are slow, so a fetch F sent in epoch E reaches L
 *   after L is at E+2, and its answer reaches F after F has jumped from E to
 *   E+2: an answer to a fetch of an older epoch, which F must drop.
 * - `leader`: the held-back broker is the leader L itself, still at E while
 *   the other replicas follow it at E+2 and fetch from it in the newer epoch,
 *   which L must refuse (UNKNOWN_LEADER_EPOCH) until its metadata catches up.
 *
 * The held-back broker is never the active controller (its Raft inbox is cut:
 * a Raft leader that hears nobody steps down) and the hold stays well under
 * the broker session, so nothing is fenced on the way.
 */
import type { Rng } from '@mq/consensus/sim';
import { brokerHost, type SimBroker } from './sim-broker.js';
import type { SimNetwork } from './sim-network.js';
import type { SimTime } from './sim-time.js';

export type StaleEpochVariant = 'follower' | 'leader';

export interface StaleEpochScriptContext {
  time: SimTime;
  net: SimNetwork;
  brokers: readonly SimBroker[];
  rng: Rng;
  topics: readonly string[];
  note: (line: string) => void;
}

/** How long a round waits for one step (a command applied where it must be) before it gives up and heals. */
const STEP_TIMEOUT_MS = 2000;

/** One round of the script; returns once everything it held back is released. */
export async function staleEpochRound(c: StaleEpochScriptContext, variant: StaleEpochVariant): Promise<void> {
  const { time, net, brokers, rng, note } = c;
  const controller = brokers.find((b) => b.alive && b.node?.controller.isActive);
  if (!controller?.node || !brokers.every((b) => b.alive && b.node)) return;
  const md = controller.node.controller.metadata;
  const cid = controller.id;
  const candidates: { topic: string; partition: number; leader: number; replicas: number[]; epoch: number }[] = [];
  for (const topic of c.topics) {
    md.topic(topic)?.partitions.forEach((p, partition) => {
      const inSync = p.replicas.length === 3 && p.replicas.every((r) => p.isr.includes(r));
      if (p.leader < 0 || !inSync || p.targetReplicas) return;
      if (variant === 'leader' && p.leader === cid) return;
      candidates.push({ topic, partition, leader: p.leader, replicas: [...p.replicas], epoch: p.leaderEpoch });
    });
  }
  if (candidates.length === 0) return;
  const { topic, partition, leader: l, replicas, epoch } = rng.pick(candidates);
  const others = replicas.filter((r) => r !== l);
  // The held-back follower is not the active controller (the leader may be).
  const followers = variant === 'follower' ? others.filter((r) => r !== cid) : others;
  if (followers.length === 0) return;
  const f = rng.pick(followers);
  const m = others.find((r) => r !== f)!;
  const held = variant === 'follower' ? f : l;
  const broker = (id: number): SimBroker => brokers.find((b) => b.id === id)!;
  const hosted = (id: number) => broker(id).node?.replicas.hostedPartition(topic, partition);
  const name = `${topic}-${partition}`;

  for (const b of brokers) if (b.id !== held) net.cutRaft(brokerHost(b.id), brokerHost(held));
  const slowMs = rng.int(600, 1200);
  if (variant === 'follower') net.slowLink(brokerHost(f), brokerHost(l), slowMs, slowMs);
  note(`SCRIPT stale-epoch-${variant}: ${name} led by ${l} at epoch ${epoch}; broker ${held}'s metadata held back${variant === 'follower' ? `, its frames to ${l} ${slowMs} ms late` : ''}`);

  const submit = async (command: Parameters<NonNullable<SimBroker['node']>['controller']['submit']>[0]): Promise<boolean> => {
    if (!controller.alive || !controller.node?.controller.isActive) return false;
    try {
      await time.within(controller.proc, () => controller.node!.controller.submit(command, STEP_TIMEOUT_MS));
      return true;
    } catch (err) {
      note(`SCRIPT ${command.type} failed: ${(err as Error).message}`);
      return false;
    }
  };
  /** Moves the leadership to `to` (made the preferred replica, then elected) at leader epoch `from` + 1; false if it did not happen. */
  const moveLeader = async (to: number, from: number): Promise<boolean> => {
    const order = [to, ...replicas.filter((r) => r !== to)];
    if (!(await submit({ type: 'alterReassignments', partitions: [{ topic, partition, replicas: order }] }))) return false;
    if (!(await submit({ type: 'electPreferred', partitions: [{ topic, partition, leaderEpoch: from }] }))) return false;
    const p = md.topic(topic)?.partitions[partition];
    return p?.leader === to && p.leaderEpoch === from + 1;
  };
  /** Polls `cond` every simulated ms (the release must follow the leader's move closely) up to STEP_TIMEOUT_MS. */
  const until = async (cond: () => boolean): Promise<boolean> => {
    const deadline = time.elapsed() + STEP_TIMEOUT_MS;
    while (!cond()) {
      if (time.elapsed() > deadline) return false;
      await time.sleep(1);
    }
    return true;
  };
  const follows = (id: number, e: number) => hosted(id)?.leaderEpoch === e;

  let ok = await moveLeader(m, epoch);
  // Every replica but the held-back one on epoch E+1 (the held-back one is still at E).
  ok &&= await until(() => replicas.every((r) => r === held || follows(r, epoch + 1)));
  if (ok) {
    note(`SCRIPT ${name}: epoch ${epoch + 1} led by ${m}`);
    await time.sleep(rng.int(20, 400));
    ok = (await moveLeader(l, epoch + 1)) && (await until(() => replicas.every((r) => r === held || (follows(r, epoch + 2) && (r !== l || hosted(r)?.role === 'leader')))));
  }
  if (ok) {
    note(`SCRIPT ${name}: epoch ${epoch + 2} led by ${l} again`);
    // The leader variant: the followers fetch from L in E+2 while L is still at E.
    if (variant === 'leader') await time.sleep(rng.int(100, 1200));
  } else {
    note(`SCRIPT ${name}: the leader did not move as scripted; releasing`);
  }
  for (const b of brokers) if (b.id !== held) net.healRaft(brokerHost(b.id), brokerHost(held));
  note(`SCRIPT ${name}: broker ${held}'s metadata released`);
  if (variant === 'follower') await time.sleep(slowMs + 200);
  net.heal();
}
