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
 * - `leader`: the held-back broker is the leader L itself. F is first kept
 *   from fetching until L takes it out of the ISR ({L, M} at E); then L's
 *   metadata is held while M leads (E+1), F catches up with M and M takes it
 *   back into the ISR, and L leads again (E+2, replicas and ISR in the order
 *   L, F, M: F is preferred after L) while F still cannot reach L. L, still at E, must refuse M's
 *   fetches of epoch E+2 (UNKNOWN_LEADER_EPOCH): a stale leader that served
 *   them would advance its HW on M alone (its old ISR) and acknowledge records
 *   F, a member of the new ISR, does not have; L then crashes, F is elected,
 *   and those acknowledged records are gone.
 *
 * The held-back broker is never the active controller (its Raft inbox is cut:
 * a Raft leader that hears nobody steps down) and the hold stays well under
 * the broker session, so nothing but the crashed L is fenced on the way.
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
  /** Crashes a broker / starts it again. */
  crash: (b: SimBroker) => void;
  restart: (b: SimBroker) => void;
}

/** How long a round waits for one step (a command applied where it must be) before it gives up and heals. */
const STEP_TIMEOUT_MS = 2000;
/** How long the leader variant waits for F to leave (replica.lag.time.max.ms is 3000) or rejoin the ISR. */
const ISR_TIMEOUT_MS = 6000;

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
  // F is not the active controller either: in the follower variant its metadata is held back; in the leader variant
  // it is cut off from L, which must still reach the controller to take F out of the ISR.
  const followers = others.filter((r) => r !== cid);
  if (followers.length === 0) return;
  const f = rng.pick(followers);
  const m = others.find((r) => r !== f)!;
  const held = variant === 'follower' ? f : l;
  const broker = (id: number): SimBroker => brokers.find((b) => b.id === id)!;
  const hosted = (id: number) => broker(id).node?.replicas.hostedPartition(topic, partition);
  const name = `${topic}-${partition}`;

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
  /** Moves the leadership to `order[0]` (made the preferred replica, then elected) at leader epoch `from` + 1; false if it did not happen. */
  const moveLeader = async (order: number[], from: number): Promise<boolean> => {
    if (!(await submit({ type: 'alterReassignments', partitions: [{ topic, partition, replicas: order }] }))) return false;
    if (!(await submit({ type: 'electPreferred', partitions: [{ topic, partition, leaderEpoch: from }] }))) return false;
    const p = md.topic(topic)?.partitions[partition];
    return p?.leader === order[0] && p.leaderEpoch === from + 1;
  };
  /** Polls `cond` every simulated ms (the release must follow the leader's move closely) up to `withinMs`. */
  const until = async (cond: () => boolean, withinMs = STEP_TIMEOUT_MS): Promise<boolean> => {
    const deadline = time.elapsed() + withinMs;
    while (!cond()) {
      if (time.elapsed() > deadline) return false;
      await time.sleep(1);
    }
    return true;
  };
  const follows = (id: number, e: number) => hosted(id)?.leaderEpoch === e;
  const isr = () => md.topic(topic)?.partitions[partition]?.isr ?? [];
  const holdMetadata = () => {
    for (const b of brokers) if (b.id !== held) net.cutRaft(brokerHost(b.id), brokerHost(held));
  };
  const releaseMetadata = () => {
    for (const b of brokers) if (b.id !== held) net.healRaft(brokerHost(b.id), brokerHost(held));
    note(`SCRIPT ${name}: broker ${held}'s metadata released`);
  };

  if (variant === 'follower') {
    const slowMs = rng.int(600, 1200);
    holdMetadata();
    net.slowLink(brokerHost(f), brokerHost(l), slowMs, slowMs);
    note(`SCRIPT stale-epoch-follower: ${name} led by ${l} at epoch ${epoch}; broker ${f}'s metadata held back, its frames to ${l} ${slowMs} ms late`);
    let ok = (await moveLeader([m, l, f], epoch)) && (await until(() => follows(l, epoch + 1) && follows(m, epoch + 1)));
    if (ok) {
      note(`SCRIPT ${name}: epoch ${epoch + 1} led by ${m}`);
      await time.sleep(rng.int(20, 400));
      ok = (await moveLeader([l, m, f], epoch + 1)) && (await until(() => follows(m, epoch + 2) && follows(l, epoch + 2) && hosted(l)?.role === 'leader'));
    }
    note(ok ? `SCRIPT ${name}: epoch ${epoch + 2} led by ${l} again` : `SCRIPT ${name}: the leader did not move as scripted; releasing`);
    // F's fetch of epoch E in flight now reaches L (at E+2) after F has its metadata, E+1 and E+2 at once.
    releaseMetadata();
    await time.sleep(slowMs + 200);
    net.heal();
    return;
  }

  // The leader variant. F cannot fetch from L until L takes it out of the ISR.
  net.cutLink(brokerHost(f), brokerHost(l));
  net.cutLink(brokerHost(l), brokerHost(f));
  note(`SCRIPT stale-epoch-leader: ${name} led by ${l} at epoch ${epoch}; broker ${f} cut off from it`);
  let ok = await until(() => !isr().includes(f) && hosted(l)?.partitionEpoch === md.topic(topic)?.partitions[partition]?.partitionEpoch, ISR_TIMEOUT_MS);
  if (ok) {
    // L's metadata held at E (ISR {L, M}); M leads E+1, F fetches from M and rejoins the ISR.
    holdMetadata();
    note(`SCRIPT ${name}: ISR [${isr().join(', ')}]; broker ${l}'s metadata held back`);
    ok = (await moveLeader([m, l, f], epoch)) && (await until(() => follows(m, epoch + 1) && follows(f, epoch + 1)));
    ok &&= await until(() => isr().includes(f), ISR_TIMEOUT_MS / 3);
  }
  if (ok) {
    note(`SCRIPT ${name}: epoch ${epoch + 1} led by ${m}, ISR [${isr().join(', ')}]`);
    ok = (await moveLeader([l, f, m], epoch + 1)) && (await until(() => follows(m, epoch + 2) && follows(f, epoch + 2)));
  }
  if (ok) {
    // M fetches from L in E+2 while L is still at E; L must refuse until it learns E+2. F still cannot reach L.
    note(`SCRIPT ${name}: epoch ${epoch + 2} led by ${l} again, ISR [${isr().join(', ')}]; ${l} still at epoch ${hosted(l)?.leaderEpoch}`);
    await time.sleep(rng.int(200, 800));
    note(`SCRIPT ${name}: CRASH broker ${l}`);
    c.crash(broker(l));
    // Fenced once its session runs out, L leaves the leadership to F (first in the ISR after it); then it restarts.
    await until(() => (md.topic(topic)?.partitions[partition]?.leaderEpoch ?? 0) > epoch + 2, ISR_TIMEOUT_MS);
    note(`SCRIPT ${name}: epoch ${md.topic(topic)?.partitions[partition]?.leaderEpoch} led by ${md.topic(topic)?.partitions[partition]?.leader}`);
    await time.sleep(rng.int(0, 1000));
    c.restart(broker(l));
  } else {
    note(`SCRIPT ${name}: the partition did not move as scripted; releasing`);
  }
  releaseMetadata();
  net.heal();
}
