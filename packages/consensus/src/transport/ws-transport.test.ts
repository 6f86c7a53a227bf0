import { afterEach, describe, expect, it } from '@jest/globals';
import net from 'node:net';
import { WebSocket } from 'ws';
import { message, MessageType, EntryType, type Message } from '../core/types.js';
import { raft as pb } from '../gen/raft.js';
import { createWsTransport, fromWire, toWire, type WsTransport } from './ws-transport.js';

const open: WsTransport[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

async function waitFor(cond: () => boolean, timeout = 5000): Promise<void> {
  const end = Date.now() + timeout;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting for condition');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function pair(): Promise<[WsTransport, WsTransport, Message[], Message[]]> {
  const a = await createWsTransport({ id: 1, clusterId: 'c1' });
  const b = await createWsTransport({ id: 2, clusterId: 'c1' });
  open.push(a, b);
  a.addPeer(2, `ws://127.0.0.1:${b.port}`);
  b.addPeer(1, `ws://127.0.0.1:${a.port}`);
  const gotA: Message[] = [];
  const gotB: Message[] = [];
  a.listen((m) => gotA.push(m));
  b.listen((m) => gotB.push(m));
  return [a, b, gotA, gotB];
}

describe('WebSocket transport', () => {
  it('round-trips every field of a message through protobuf', () => {
    const m = message({
      type: MessageType.Snap,
      to: 2,
      from: 1,
      term: 7,
      logTerm: 6,
      index: 100,
      commit: 99,
      reject: true,
      rejectHint: 42,
      context: Buffer.from('ctx'),
      entries: [{ term: 7, index: 101, type: EntryType.ConfChange, data: Buffer.from('d') }],
      snapshot: { index: 90, term: 5, size: 10, confState: { voters: [1, 2], learners: [3] } },
      snapOffset: 4,
      snapData: Buffer.from('chunk'),
      snapDone: true,
    });
    const back = fromWire(pb.Message.decode(pb.Message.encode(toWire(m)).finish()));
    expect({ ...back, context: Buffer.from(back.context), snapData: Buffer.from(back.snapData), entries: back.entries.map((e) => ({ ...e, data: Buffer.from(e.data) })) }).toEqual({
      ...m,
      context: Buffer.from('ctx'),
      snapData: Buffer.from('chunk'),
      entries: [{ term: 7, index: 101, type: EntryType.ConfChange, data: Buffer.from('d') }],
    });
  });

  it('delivers messages both ways once connected', async () => {
    const [a, b, gotA, gotB] = await pair();
    await waitFor(() => {
      a.send([message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 3, commit: 5 })]);
      return gotB.length > 0;
    });
    expect(gotB[0]).toMatchObject({ type: MessageType.Heartbeat, from: 1, to: 2, term: 3, commit: 5 });
    await waitFor(() => {
      b.send([message({ type: MessageType.HeartbeatResp, from: 2, to: 1, term: 3 })]);
      return gotA.length > 0;
    });
    expect(a.stats().sent).toBeGreaterThan(0);
  });

  it('drops, without blocking, messages to an unknown node and beyond a bounded queue for an unreachable one', async () => {
    const a = await createWsTransport({ id: 1, peers: { 9: 'ws://127.0.0.1:1' } });
    open.push(a);
    a.listen(() => undefined);
    a.send([message({ type: MessageType.Heartbeat, from: 1, to: 5, term: 1 })]);
    expect(a.stats().dropped).toBe(1);
    const big = { term: 1, index: 1, type: EntryType.Normal, data: Buffer.alloc(512 * 1024) };
    const t0 = Date.now();
    for (let i = 0; i < 20; i++) a.send([message({ type: MessageType.App, from: 1, to: 9, term: 1, entries: [big] })]);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(a.stats().dropped).toBeGreaterThan(5); // 4 MiB wait for the connection, the rest is dropped
  });

  it('re-dials a restarted peer by itself and delivers what was sent meanwhile', async () => {
    const [a, b, , gotB] = await pair();
    await waitFor(() => {
      a.send([message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 1 })]);
      return gotB.length > 0;
    });
    const port = b.port;
    await b.close();
    open.splice(open.indexOf(b), 1);
    await new Promise((r) => setTimeout(r, 50));
    a.send([message({ type: MessageType.Vote, from: 1, to: 2, term: 2, index: 7 })]); // while b is down
    const b2 = await createWsTransport({ id: 2, clusterId: 'c1', port, peers: { 1: `ws://127.0.0.1:${a.port}` } });
    open.push(b2);
    const got2: Message[] = [];
    b2.listen((m) => got2.push(m));
    await waitFor(() => got2.some((m) => m.type === MessageType.Vote));
  });

  it('reports a peer unreachable only when dialling it is refused (its port closed), and reachable again once a connection opens', async () => {
    const [a, b, , gotB] = await pair();
    const events: string[] = [];
    a.onPeerReachability((id, reachable) => events.push(`${id}:${reachable ? 'up' : 'down'}`));
    await waitFor(() => {
      a.send([message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 1 })]);
      return gotB.length > 0;
    });
    const port = b.port;
    await b.close();
    open.splice(open.indexOf(b), 1);
    await waitFor(() => events.includes('2:down'));
    expect(events).toEqual(['2:down']);
    const b2 = await createWsTransport({ id: 2, clusterId: 'c1', port, peers: { 1: `ws://127.0.0.1:${a.port}` } });
    open.push(b2);
    b2.listen(() => undefined);
    await waitFor(() => events.includes('2:up'));
    expect(events).toEqual(['2:down', '2:up']);
  });

  it('does not report a peer whose connection is reset while its port still accepts', async () => {
    // a reaches b through a TCP relay; the relay resets every connection once but keeps listening.
    const b = await createWsTransport({ id: 2, clusterId: 'c1', peers: { 1: 'ws://127.0.0.1:1' } });
    open.push(b);
    const gotB: Message[] = [];
    b.listen((m) => gotB.push(m));
    const sockets = new Set<net.Socket>();
    const relay = net.createServer((c) => {
      const up = net.connect(b.port, '127.0.0.1');
      sockets.add(c).add(up);
      c.pipe(up).pipe(c);
      const end = () => {
        c.destroy();
        up.destroy();
      };
      c.on('error', end).on('close', end);
      up.on('error', end).on('close', end);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    try {
      const a = await createWsTransport({ id: 1, clusterId: 'c1', peers: { 2: `ws://127.0.0.1:${(relay.address() as net.AddressInfo).port}` } });
      open.push(a);
      a.listen(() => undefined);
      const events: boolean[] = [];
      a.onPeerReachability((_id, reachable) => events.push(reachable));
      await waitFor(() => {
        a.send([message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 1 })]);
        return gotB.length > 0;
      });
      for (const so of sockets) so.resetAndDestroy();
      sockets.clear();
      const before = gotB.length;
      await waitFor(() => {
        a.send([message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 1 })]);
        return gotB.length > before;
      });
      expect(events).toEqual([]);
    } finally {
      for (const so of sockets) so.destroy();
      await new Promise((r) => relay.close(r));
    }
  });

  it('reports a dying peer whose port resets the redial right after the lost connection, then refuses (without waiting for reconnectMs)', async () => {
    // A killed process's kernel may close its connections a moment before its listening socket: the redial
    // right after the drop is reset, the next one refused. Through a relay that does exactly that.
    const b = await createWsTransport({ id: 2, clusterId: 'c1', peers: { 1: 'ws://127.0.0.1:1' } });
    open.push(b);
    const gotB: Message[] = [];
    b.listen((m) => gotB.push(m));
    const sockets = new Set<net.Socket>();
    let dying = false;
    const relay = net.createServer((c) => {
      if (dying) {
        c.resetAndDestroy();
        relay.close();
        return;
      }
      const up = net.connect(b.port, '127.0.0.1');
      sockets.add(c).add(up);
      c.pipe(up).pipe(c);
      const end = () => {
        c.destroy();
        up.destroy();
      };
      c.on('error', end).on('close', end);
      up.on('error', end).on('close', end);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    try {
      // reconnectMs far beyond the test: only the quick redials can find the refusal.
      const a = await createWsTransport({ id: 1, clusterId: 'c1', reconnectMs: 600_000, peers: { 2: `ws://127.0.0.1:${(relay.address() as net.AddressInfo).port}` } });
      open.push(a);
      a.listen(() => undefined);
      const events: boolean[] = [];
      a.onPeerReachability((_id, reachable) => events.push(reachable));
      await waitFor(() => {
        a.send([message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 1 })]);
        return gotB.length > 0;
      });
      dying = true;
      for (const so of sockets) so.resetAndDestroy();
      sockets.clear();
      await waitFor(() => events.length > 0, 10_000);
      expect(events).toEqual([false]);
    } finally {
      for (const so of sockets) so.destroy();
      relay.close();
    }
  });

  it('refuses a connection from an unknown node, another cluster, or garbage', async () => {
    const b = await createWsTransport({ id: 2, clusterId: 'c1', peers: { 1: 'ws://127.0.0.1:1' } });
    open.push(b);
    const got: Message[] = [];
    b.listen((m) => got.push(m));
    const attempt = (frame: Uint8Array) =>
      new Promise<{ code: number; reason: string }>((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${b.port}`);
        ws.on('open', () => ws.send(frame));
        ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
      });
    const unknown = await attempt(pb.Envelope.encode({ hello: { clusterId: 'c1', from: 7, to: 2 } }).finish());
    expect(unknown).toEqual({ code: 4002, reason: expect.stringContaining('UNKNOWN_NODE') });
    const other = await attempt(pb.Envelope.encode({ hello: { clusterId: 'other', from: 1, to: 2 } }).finish());
    expect(other.code).toBe(4001);
    const garbage = await attempt(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect(garbage.reason).toContain('CORRUPT_MESSAGE');
    expect(got).toEqual([]);
    expect(b.stats().refused).toBe(3);
  });

  it('closes an incoming connection that does not introduce itself in time (silent, or a Hello then nothing with a secret)', async () => {
    const b = await createWsTransport({ id: 2, clusterId: 'c1', peers: { 1: 'ws://127.0.0.1:1' }, introductionTimeoutMs: 300 });
    const s = await createWsTransport({ id: 3, clusterId: 'c1', peers: { 1: 'ws://127.0.0.1:1' }, introductionTimeoutMs: 300, secret: Buffer.alloc(32, 7), verifyPeerAddress: false });
    open.push(b, s);
    const closed = (port: number, frame?: Uint8Array) =>
      new Promise<{ code: number; reason: string }>((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}`);
        ws.on('open', () => frame && ws.send(frame));
        ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
      });
    expect(await closed(b.port)).toEqual({ code: 4005, reason: expect.stringContaining('no hello within 300 ms') });
    const halfway = await closed(s.port, pb.Envelope.encode({ hello: { clusterId: 'c1', from: 1, to: 3, nonce: Buffer.alloc(32, 1) } }).finish());
    expect(halfway).toEqual({ code: 4005, reason: expect.stringContaining('no proof of the cluster secret') });
  });

  it('refuses a browser (a WebSocket upgrade with an Origin header) with 403 before any frame', async () => {
    const b = await createWsTransport({ id: 2, clusterId: 'c1', peers: { 1: 'ws://127.0.0.1:1' } });
    open.push(b);
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${b.port}`, { origin: 'http://evil.example:8000' });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => reject(new Error('a browser origin opened a Raft connection')));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(403);
    expect(b.stats().refused).toBe(1);
  });

  it('forged Raft peers: a Hello naming a voter is refused unless it comes from that voter\'s address', async () => {
    const b = await createWsTransport({ id: 2, clusterId: 'c1', peers: { 1: 'ws://127.0.0.1:1', 3: 'ws://localhost:1' } });
    open.push(b);
    const got: Message[] = [];
    b.listen((m) => got.push(m));
    // A higher-term heartbeat and an append with a metadata command, as a forger claiming to be voter 1 would send them.
    const forged = pb.Envelope.encode({
      hello: { clusterId: 'c1', from: 1, to: 2 },
      messages: [toWire(message({ type: MessageType.App, from: 1, to: 2, term: 99, index: 5, logTerm: 1, entries: [{ term: 99, index: 6, type: EntryType.Normal, data: Buffer.from('{"type":"createTopic"}') }] }))],
    }).finish();
    const from = (localAddress: string, frame: Uint8Array) =>
      new Promise<{ code: number; reason: string }>((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${b.port}`, { localAddress });
        ws.on('open', () => ws.send(frame));
        ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
      });
    const other = await from('127.0.0.2', forged);
    expect(other).toEqual({ code: 4003, reason: expect.stringContaining('UNKNOWN_NODE: node 1 is at 127.0.0.1, not 127.0.0.2') });
    // A peer named by host name is checked against what the name resolves to.
    const byName = await from('127.0.0.2', pb.Envelope.encode({ hello: { clusterId: 'c1', from: 3, to: 2 } }).finish());
    expect(byName.code).toBe(4003);
    expect(got).toEqual([]);
    // From the voter's own address the same Hello is accepted (the message reaches Raft, which judges it).
    const ws = new WebSocket(`ws://127.0.0.1:${b.port}`, { localAddress: '127.0.0.1' });
    ws.on('open', () => ws.send(forged));
    await waitFor(() => got.length === 1);
    ws.close();
  });

  it('with a cluster secret: peers that share it exchange messages; a forged Hello without the proof, or a wrong secret, delivers nothing', async () => {
    const secret = Buffer.from('shared cluster secret, 32 bytes.');
    const a = await createWsTransport({ id: 1, clusterId: 'c1', secret });
    const b = await createWsTransport({ id: 2, clusterId: 'c1', secret });
    const wrong = await createWsTransport({ id: 3, clusterId: 'c1', secret: Buffer.from('some other secret of 32 bytes...') });
    open.push(a, b, wrong);
    a.addPeer(2, `ws://127.0.0.1:${b.port}`);
    wrong.addPeer(2, `ws://127.0.0.1:${b.port}`);
    b.addPeer(1, `ws://127.0.0.1:${a.port}`);
    b.addPeer(3, `ws://127.0.0.1:${wrong.port}`);
    const got: Message[] = [];
    b.listen((m) => got.push(m));
    a.listen(() => undefined);
    wrong.listen(() => undefined);
    // Sent before the connection is authenticated: it waits for the exchange, then arrives.
    a.send([message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 1 })]);
    await waitFor(() => got.length === 1);
    expect(got[0]!.from).toBe(1);

    // A forger that knows the cluster id and a voter's id, from that voter's address, but not the secret.
    const forged = pb.Envelope.encode({
      hello: { clusterId: 'c1', from: 1, to: 2 },
      messages: [toWire(message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 99 }))],
    }).finish();
    const refusedBefore = b.stats().refused;
    const closed = await new Promise<{ code: number; reason: string }>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${b.port}`);
      ws.on('open', () => ws.send(forged));
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    });
    expect(closed).toEqual({ code: 4004, reason: expect.stringContaining('CLUSTER_AUTHENTICATION_FAILED') });
    // A Hello with a nonce gets a challenge; Raft messages instead of the proof close the connection.
    const skipped = await new Promise<{ code: number; challenged: boolean }>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${b.port}`);
      let challenged = false;
      ws.on('open', () => ws.send(pb.Envelope.encode({ hello: { clusterId: 'c1', from: 1, to: 2, nonce: Buffer.alloc(32, 7) } }).finish()));
      ws.on('message', (data: Buffer) => {
        challenged = pb.Envelope.decode(data).challenge !== null;
        ws.send(pb.Envelope.encode({ messages: [toWire(message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 99 }))] }).finish());
      });
      ws.on('close', (code) => resolve({ code, challenged }));
    });
    expect(skipped).toEqual({ code: 4004, challenged: true });
    // The node with the wrong secret refuses b's challenge itself; nothing of it reaches b.
    wrong.send([message({ type: MessageType.Heartbeat, from: 3, to: 2, term: 98 })]);
    await new Promise((r) => setTimeout(r, 500));
    expect(got.map((m) => m.term)).toEqual([1]);
    expect(b.stats().refused).toBeGreaterThanOrEqual(refusedBefore + 2);
  });
});
