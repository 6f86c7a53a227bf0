/**
 * The contract every RaftTransport must meet, as one jest suite run against
 * each implementation (WebSocket, in-memory, and any other):
 *
 *   import { raftTransportCompliance } from '@mq/consensus/compliance';
 *   raftTransportCompliance('mine', { create: async (ids) => new Map(ids.map((id) => [id, makeMine(id)])) });
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { EntryType, MessageType, message, type Message } from '../core/types.js';
import type { RaftTransport } from '../node/types.js';

export interface TransportFactory {
  /** Transports for `ids`, each able to reach all the others. */
  create(ids: number[]): Promise<Map<number, RaftTransport>>;
  cleanup?(): Promise<void>;
}

async function waitFor(cond: () => boolean, timeout = 5000): Promise<void> {
  const end = Date.now() + timeout;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting for delivery');
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function raftTransportCompliance(name: string, factory: TransportFactory): void {
  describe(`RaftTransport compliance: ${name}`, () => {
    const open: RaftTransport[] = [];
    afterEach(async () => {
      for (const t of open.splice(0)) await t.close();
      await factory.cleanup?.();
    });
    const make = async (ids: number[]) => {
      const ts = await factory.create(ids);
      open.push(...ts.values());
      const inbox = new Map<number, Message[]>();
      for (const [id, t] of ts) {
        inbox.set(id, []);
        t.listen((m) => inbox.get(id)!.push(m));
      }
      return { ts, inbox };
    };

    it('delivers to the addressee only, with every field intact', async () => {
      const { ts, inbox } = await make([1, 2, 3]);
      const m = message({
        type: MessageType.App,
        from: 1,
        to: 3,
        term: 4,
        logTerm: 3,
        index: 10,
        commit: 9,
        entries: [{ term: 4, index: 11, type: EntryType.Normal, data: Buffer.from('payload') }],
        context: Buffer.from('c'),
      });
      await waitFor(() => {
        ts.get(1)!.send([m]);
        return inbox.get(3)!.length > 0;
      });
      const got = inbox.get(3)![0]!;
      expect({ type: got.type, from: got.from, to: got.to, term: got.term, logTerm: got.logTerm, index: got.index, commit: got.commit }).toEqual({
        type: MessageType.App, from: 1, to: 3, term: 4, logTerm: 3, index: 10, commit: 9,
      });
      expect(Buffer.from(got.entries[0]!.data).toString()).toBe('payload');
      expect(Buffer.from(got.context).toString()).toBe('c');
      expect(inbox.get(2)).toEqual([]);
    });

    it('keeps the order of messages on one link once connected', async () => {
      const { ts, inbox } = await make([1, 2]);
      await waitFor(() => {
        ts.get(1)!.send([message({ type: MessageType.HeartbeatResp, from: 1, to: 2, term: 1 })]);
        return inbox.get(2)!.length > 0;
      });
      ts.get(1)!.send(Array.from({ length: 50 }, (_, i) => message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 1, commit: i })));
      const beats = () => inbox.get(2)!.filter((m) => m.type === MessageType.Heartbeat);
      await waitFor(() => beats().length >= 50);
      expect(beats().map((m) => m.commit)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    });

    it('never throws or blocks on a message to an unknown node', async () => {
      const { ts } = await make([1, 2]);
      expect(() => ts.get(1)!.send([message({ type: MessageType.Heartbeat, from: 1, to: 99, term: 1 })])).not.toThrow();
    });

    it('delivers nothing after close', async () => {
      const { ts, inbox } = await make([1, 2]);
      await ts.get(2)!.close();
      ts.get(1)!.send([message({ type: MessageType.Heartbeat, from: 1, to: 2, term: 1 })]);
      await new Promise((r) => setTimeout(r, 50));
      expect(inbox.get(2)).toEqual([]);
    });
  });
}
