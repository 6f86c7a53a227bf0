/**
 * Interpreter for the scenario scripts in testdata/*.txt (etcd raft's
 * datadriven style): a command, `----`, and the trace it must produce.
 * Nodes are RaftCore instances over MemoryStorage; the harness plays the
 * driver (persist, send, apply, advance) step by step so that a reader can
 * follow every message.
 */
import { isMqError } from '@mq/protocol/errors';
import { MemoryStorage } from '../src/storage/memory-storage.js';
import { Rng } from '../src/sim/rng.js';
import { applyToConfState, decodeConfChange, encodeConfChange } from '../src/core/conf-change.js';
import { RaftCore } from '../src/core/raft.js';
import {
  ConfChangeOp,
  EntryType,
  MESSAGE_TYPE_NAMES,
  MessageType,
  message,
  type Entry,
  type Message,
  type Ready,
} from '../src/core/types.js';

interface HNode {
  id: number;
  core: RaftCore;
  storage: MemoryStorage;
  state: Map<string, string>;
  applied: number;
  inflight: Ready | undefined;
  opts: Record<string, number | boolean>;
}

export interface ScenarioCase {
  line: number;
  cmd: string;
  expected: string;
}

export function parseScenario(text: string): ScenarioCase[] {
  const lines = text.split('\n');
  const out: ScenarioCase[] = [];
  let i = 0;
  while (i < lines.length) {
    const l = lines[i]!;
    if (l.trim() === '' || l.startsWith('#')) {
      i++;
      continue;
    }
    const line = i + 1;
    const cmd = l.trim();
    i++;
    if (lines[i]?.trim() !== '----') throw new Error(`line ${line}: expected ---- after command "${cmd}"`);
    i++;
    const exp: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '') exp.push(lines[i++]!);
    out.push({ line, cmd, expected: exp.join('\n') });
  }
  return out;
}

/** Renders cases back to text with actual outputs (REWRITE=1). */
export function renderScenario(text: string, actual: Map<number, string>): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const l = lines[i]!;
    if (l.trim() === '' || l.startsWith('#')) {
      out.push(l);
      i++;
      continue;
    }
    const line = i + 1;
    out.push(l, '----');
    i += 2;
    while (i < lines.length && lines[i]!.trim() !== '') i++;
    const a = actual.get(line) ?? '';
    if (a) out.push(a);
  }
  return out.join('\n');
}

function fmtEntry(e: Entry): string {
  if (e.type === EntryType.ConfChange) {
    const cc = decodeConfChange(e.data);
    const op = cc.op === ConfChangeOp.AddVoter ? 'v' : cc.op === ConfChangeOp.AddLearner ? 'l' : 'r';
    return `${e.term}/${e.index} ${op}${cc.nodeId}`;
  }
  return e.data.length === 0 ? `${e.term}/${e.index}` : `${e.term}/${e.index} "${Buffer.from(e.data).toString()}"`;
}

export function fmtMessage(m: Message): string {
  const name = MESSAGE_TYPE_NAMES[m.type] ?? String(m.type);
  const parts = [`${m.from}->${m.to} ${name} term=${m.term}`];
  switch (m.type) {
    case MessageType.App:
      parts.push(`log=${m.logTerm}/${m.index} commit=${m.commit}`);
      if (m.entries.length > 0) parts.push(`entries=[${m.entries.map(fmtEntry).join(', ')}]`);
      break;
    case MessageType.AppResp:
      parts.push(`index=${m.index}`);
      if (m.reject) parts.push(`rejected hint=${m.logTerm}/${m.rejectHint}`);
      break;
    case MessageType.Vote:
    case MessageType.PreVote:
      parts.push(`last=${m.logTerm}/${m.index}`);
      if (m.context.length > 0) parts.push('(transfer)');
      break;
    case MessageType.VoteResp:
    case MessageType.PreVoteResp:
      parts.push(m.reject ? 'rejected' : 'granted');
      break;
    case MessageType.Heartbeat:
      parts.push(`commit=${m.commit}`);
      if (m.context.length > 0) parts.push(`ctx=${Buffer.from(m.context).toString()}`);
      break;
    case MessageType.HeartbeatResp:
      if (m.context.length > 0) parts.push(`ctx=${Buffer.from(m.context).toString()}`);
      break;
    case MessageType.Snap:
      parts.push(`snap=${m.snapshot!.term}/${m.snapshot!.index} offset=${m.snapOffset} len=${m.snapData.length}/${m.snapshot!.size}${m.snapDone ? ' done' : ''}`);
      break;
    case MessageType.SnapResp:
      parts.push(`snap=${m.snapshot!.term}/${m.snapshot!.index} next=${m.snapOffset}${m.reject ? ' rejected' : ''}`);
      break;
    case MessageType.ReadIndex:
    case MessageType.ReadIndexResp:
      parts.push(`index=${m.index} ctx=${Buffer.from(m.context).toString()}`);
      break;
  }
  return parts.join(' ');
}

export class ScenarioHarness {
  private nodes = new Map<number, HNode>();
  private net: Message[] = [];
  private blocked = new Set<string>();
  private out: string[] = [];
  private rng = new Rng(1);

  run(cmdLine: string): string {
    this.out = [];
    const [cmd, ...args] = cmdLine.split(/\s+/);
    const kv: Record<string, string> = {};
    const pos: string[] = [];
    for (const a of args) {
      const m = /^([a-z-]+)=(.*)$/.exec(a);
      if (m) kv[m[1]!] = m[2]!;
      else pos.push(a);
    }
    try {
      this.exec(cmd!, pos, kv);
    } catch (err) {
      if (isMqError(err)) this.out.push(`error ${err.code}: ${err.message}`);
      else throw err;
    }
    return this.out.join('\n');
  }

  private node(id: string | number | undefined): HNode {
    const n = this.nodes.get(Number(id));
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  private exec(cmd: string, pos: string[], kv: Record<string, string>): void {
    switch (cmd) {
      case 'cluster': {
        // cluster voters=1,2,3 [learners=4] [others=5,6] [prevote=false] [checkquorum=false]
        const voters = (kv.voters ?? '1').split(',').map(Number);
        const learners = kv.learners ? kv.learners.split(',').map(Number) : [];
        const others = kv.others ? kv.others.split(',').map(Number) : [];
        const opts = {
          preVote: kv.prevote !== 'false',
          checkQuorum: kv.checkquorum !== 'false',
          maxSizePerMsg: Number(kv['max-size'] ?? 1024 * 1024),
          maxInflightMsgs: Number(kv.inflight ?? 256),
          snapshotChunkBytes: Number(kv.chunk ?? 1024 * 1024),
        };
        const boot: Entry[] = [
          ...voters.map((v) => ({ op: ConfChangeOp.AddVoter, nodeId: v })),
          ...learners.map((v) => ({ op: ConfChangeOp.AddLearner, nodeId: v })),
        ].map((cc, i) => ({ term: 1, index: i + 1, type: EntryType.ConfChange, data: encodeConfChange(cc) }));
        for (const id of [...voters, ...learners, ...others]) {
          const storage = new MemoryStorage();
          if (!others.includes(id)) storage.applyUpdate({ entries: boot, hardState: { term: 1, vote: 0, commit: boot.length } });
          this.addNode(id, storage, opts);
        }
        // Apply the founding membership (no messages flow yet).
        for (const n of this.nodes.values()) this.processReady(n, false);
        this.status();
        return;
      }
      case 'add-node': {
        // a fresh, empty node (to join with add-voter / add-learner)
        const id = Number(pos[0]);
        this.addNode(id, new MemoryStorage(), { preVote: true, checkQuorum: true });
        return;
      }
      case 'campaign':
        this.node(pos[0]).core.campaign();
        return;
      case 'forget-leader': {
        // forget-leader <node> <leader>: a failure detector outside Raft says <leader> is gone
        if (!this.node(pos[0]).core.forgetLeader(Number(pos[1]))) this.out.push('unchanged');
        return;
      }
      case 'tick': {
        const n = this.node(pos[0]);
        const times = Number(pos[1] ?? 1);
        for (let i = 0; i < times; i++) n.core.tick();
        return;
      }
      case 'tick-election': {
        // enough ticks for any randomized election timeout
        for (const id of pos) {
          const n = this.node(id);
          for (let i = 0; i < 2 * n.core.opts.electionTick; i++) n.core.tick();
        }
        return;
      }
      case 'propose': {
        const n = this.node(pos[0]);
        const r = n.core.propose(Buffer.from(pos[1] ?? ''));
        this.out.push(`proposed at ${r.term}/${r.index}`);
        return;
      }
      case 'add-voter':
      case 'add-learner':
      case 'remove-node': {
        const n = this.node(pos[0]);
        const op = cmd === 'add-voter' ? ConfChangeOp.AddVoter : cmd === 'add-learner' ? ConfChangeOp.AddLearner : ConfChangeOp.RemoveNode;
        const r = n.core.proposeConfChange(encodeConfChange({ op, nodeId: Number(pos[1]) }));
        this.out.push(`proposed at ${r.term}/${r.index}`);
        return;
      }
      case 'transfer-leadership':
        this.node(pos[0]).core.transferLeadership(Number(pos[1]));
        return;
      case 'read-index':
        this.node(pos[0]).core.readIndex(Buffer.from(pos[1] ?? 'r'));
        return;
      case 'stabilize': {
        const only = pos.length ? pos.map(Number) : undefined;
        this.stabilize(only);
        return;
      }
      case 'process-ready': {
        // persist + send + apply for one node, without delivering; lists what it sends
        const before = this.net.length;
        this.processReady(this.node(pos[0]), true);
        for (const m of this.net.slice(before)) this.out.push(`queued: ${fmtMessage(m)}`);
        return;
      }
      case 'take-ready': {
        // take a Ready but keep its storage writes "in flight" (not persisted, nothing sent)
        const n = this.node(pos[0]);
        if (!n.core.hasReady()) return;
        n.inflight = n.core.ready();
        this.out.push(`${n.id} write in flight: entries=[${n.inflight.entries.map(fmtEntry).join(', ')}]${n.inflight.hardState ? ` hardstate=${JSON.stringify(n.inflight.hardState)}` : ''} (${n.inflight.messages.length} messages held)`);
        return;
      }
      case 'deliver': {
        // deliver queued messages [to node X] [drop=true]
        const to = pos[0] ? Number(pos[0]) : undefined;
        const drop = kv.drop === 'true';
        this.deliverAll(to, drop);
        return;
      }
      case 'partition': {
        // partition 1 | 2,3  (groups separated by |)
        const groups = pos.join(' ').split('|').map((g) => g.trim().split(/[ ,]+/).filter(Boolean).map(Number));
        this.blocked.clear();
        for (const a of groups) for (const b of groups) if (a !== b) for (const x of a) for (const y of b) this.blocked.add(`${x}>${y}`);
        return;
      }
      case 'block': {
        // one-way: block a>b
        this.blocked.add(`${pos[0]}>${pos[1]}`);
        return;
      }
      case 'heal':
        this.blocked.clear();
        return;
      case 'restart': {
        // crash: in-flight writes and queued messages to it are lost; restart from storage
        const n = this.node(pos[0]);
        this.net = this.net.filter((m) => m.to !== n.id && m.from !== n.id);
        this.addNode(n.id, n.storage, n.opts, true);
        this.out.push(`${n.id} restarted: ${this.describe(this.node(n.id))}`);
        return;
      }
      case 'compact': {
        const n = this.node(pos[0]);
        const index = Number(pos[1] ?? n.applied);
        const data = Buffer.from(JSON.stringify([...n.state]));
        void n.storage.createSnapshot(index, n.core.confState(), data, 0);
        this.out.push(`${n.id} snapshot at ${index}, log now [${n.storage.firstIndex()}, ${n.storage.lastIndex()}]`);
        return;
      }
      case 'step': {
        // step X type=App from=2 term=3 index=.. logterm=.. commit=.. entries=t/i,t/i
        const n = this.node(pos[0]);
        const type = Object.entries(MessageType).find(([k]) => k === kv.type)?.[1];
        if (type === undefined) throw new Error(`unknown type ${kv.type}`);
        const entries: Entry[] = (kv.entries ? kv.entries.split(',') : []).map((s) => {
          const [t, i] = s.split('/').map(Number);
          return { term: t!, index: i!, type: EntryType.Normal, data: Buffer.from(`x${i}`) };
        });
        const snap = kv.snap?.split('/').map(Number);
        n.core.step(
          message({
            ...(snap ? { snapshot: { term: snap[0]!, index: snap[1]!, confState: { voters: [1, 2, 3], learners: [] }, size: 2 } } : {}),
            snapData: Buffer.from(snap ? '[]' : ''),
            snapDone: Boolean(snap),
            type,
            from: Number(kv.from ?? 0),
            to: Number(kv.to ?? n.id),
            term: Number(kv.term ?? 0),
            index: Number(kv.index ?? 0),
            logTerm: Number(kv.logterm ?? 0),
            commit: Number(kv.commit ?? 0),
            entries,
          }),
        );
        return;
      }
      case 'status':
        this.status();
        return;
      case 'log': {
        const n = this.node(pos[0]);
        const ents = n.core.log.slice(n.core.log.firstIndex(), n.core.log.lastIndex() + 1, Number.MAX_SAFE_INTEGER);
        this.out.push(`${n.id} log [${n.core.log.firstIndex()}..${n.core.log.lastIndex()}] commit=${n.core.log.committed}: ${ents.map(fmtEntry).join(', ')}`);
        return;
      }
      case 'kv': {
        const n = this.node(pos[0]);
        this.out.push(`${n.id} applied=${n.applied} ${JSON.stringify(Object.fromEntries([...n.state].sort()))}`);
        return;
      }
      default:
        throw new Error(`unknown command ${cmd}`);
    }
  }

  private addNode(id: number, storage: MemoryStorage, opts: Record<string, number | boolean>, restart = false): void {
    const core = new RaftCore({ id, ...opts }, storage, () => this.rng.next());
    const n: HNode = { id, core, storage, state: new Map(), applied: 0, inflight: undefined, opts };
    const snap = storage.snapshot();
    if (snap.meta.index > 0) {
      n.state = new Map(JSON.parse(Buffer.from(snap.data).toString()) as [string, string][]);
      n.applied = snap.meta.index;
      core.log.applied = snap.meta.index;
      core.log.applying = snap.meta.index;
    }
    this.nodes.set(id, n);
    if (restart) this.processReady(n, false);
  }

  private describe(n: HNode): string {
    const c = n.core;
    return `${c.role} term=${c.term} vote=${c.vote} lead=${c.lead} commit=${c.log.committed} applied=${n.applied} last=${c.log.lastIndex()}`;
  }

  private status(): void {
    for (const n of [...this.nodes.values()].sort((a, b) => a.id - b.id)) {
      const cs = n.core.confState();
      const learners = cs.learners.length ? ` learners=${cs.learners.join(',')}` : '';
      this.out.push(`${n.id}: ${this.describe(n)} voters=${cs.voters.join(',')}${learners}`);
      if (n.core.role === 'leader') {
        const prs = [...n.core.prs].sort((a, b) => a[0] - b[0]).filter(([id]) => id !== n.id);
        for (const [id, pr] of prs) this.out.push(`   progress ${id}: ${pr.state} match=${pr.match} next=${pr.next}${pr.isLearner ? ' learner' : ''}`);
      }
    }
  }

  /** Persist, send, apply, advance: what the node driver does. */
  private processReady(n: HNode, show: boolean): boolean {
    let any = false;
    if (n.inflight) {
      // writes in flight complete now
      this.finishReady(n, n.inflight, show);
      n.inflight = undefined;
      any = true;
    }
    while (n.core.hasReady()) {
      any = true;
      this.finishReady(n, n.core.ready(), show);
    }
    return any;
  }

  private finishReady(n: HNode, rd: Ready, show: boolean): void {
    n.storage.applyUpdate({ snapshot: rd.snapshot, entries: rd.entries, hardState: rd.hardState });
    if (show && rd.softState) this.out.push(`${n.id} is ${rd.softState.role} at term ${n.core.term}${rd.softState.leader ? ` (leader ${rd.softState.leader})` : ''}`);
    if (rd.snapshot) {
      n.state = new Map(JSON.parse(Buffer.from(rd.snapshot.data).toString() || '[]') as [string, string][]);
      n.applied = rd.snapshot.meta.index;
      if (show) this.out.push(`${n.id} installed snapshot ${rd.snapshot.meta.term}/${rd.snapshot.meta.index} voters=${rd.snapshot.meta.confState.voters.join(',')}`);
    }
    for (const m of rd.messages) this.net.push(m);
    let cs = n.core.confState();
    let confChanged = false;
    for (const e of rd.committedEntries) {
      if (e.type === EntryType.Normal && e.data.length > 0) {
        const [k, v] = Buffer.from(e.data).toString().split(':');
        n.state.set(k!, v ?? '');
      }
      if (e.type === EntryType.ConfChange) {
        cs = applyToConfState(cs, decodeConfChange(e.data));
        confChanged = true;
      }
      n.applied = e.index;
    }
    if (show && rd.committedEntries.length > 0) {
      this.out.push(`${n.id} applied ${rd.committedEntries.map(fmtEntry).join(', ')}`);
      if (confChanged) this.out.push(`${n.id} membership now voters=${cs.voters.join(',')}${cs.learners.length ? ` learners=${cs.learners.join(',')}` : ''}`);
    }
    for (const rs of rd.readStates) if (show) this.out.push(`${n.id} read ${Buffer.from(rs.context).toString()} ready at index ${rs.index}`);
    n.core.advance(rd);
  }

  private deliverAll(to: number | undefined, drop: boolean): boolean {
    const keep: Message[] = [];
    const send: Message[] = [];
    for (const m of this.net) (to === undefined || m.to === to ? send : keep).push(m);
    this.net = keep;
    for (const m of send) {
      const dst = this.nodes.get(m.to);
      if (drop || !dst || this.blocked.has(`${m.from}>${m.to}`)) {
        this.out.push(`dropped: ${fmtMessage(m)}`);
        continue;
      }
      this.out.push(fmtMessage(m));
      try {
        dst.core.step(m);
      } catch (err) {
        if (isMqError(err)) this.out.push(`  refused by ${m.to}: ${err.code} ${err.message}`);
        else throw err;
      }
    }
    return send.length > 0;
  }

  private stabilize(only?: number[]): void {
    for (let round = 0; round < 1000; round++) {
      let any = false;
      for (const n of [...this.nodes.values()].sort((a, b) => a.id - b.id)) {
        if (only && !only.includes(n.id)) continue;
        if (this.processReady(n, true)) any = true;
      }
      const before = this.net.length;
      if (before > 0) {
        if (only) {
          const mine = this.net.filter((m) => only.includes(m.to));
          if (mine.length > 0) {
            this.net = this.net.filter((m) => !only.includes(m.to));
            const saved = this.net;
            this.net = mine;
            this.deliverAll(undefined, false);
            this.net = [...saved, ...this.net];
            any = true;
          }
        } else {
          this.deliverAll(undefined, false);
          any = true;
        }
      }
      if (!any) return;
    }
    throw new Error('stabilize did not converge');
  }
}
